/*
 * trace.h - what propagation did, kept as data: where each axis of each sharding came from
 * (Shardy's "sharding origins") and, per op, which operand or result each axis moved from and
 * to in which step (Shardy's "propagation edges").
 *
 * A trace belongs to a module (m->trace) and lives as long as it, so that every pass that runs
 * with Shardy's debugging options (-sdy-apply-sharding-constraints, the propagation passes,
 * -sdy-sink-data-flow-edges) adds to the same record and the plan stage can read it after
 * propagation. Nothing in it is printed by itself: trace_attrs.h turns it into Shardy's
 * attributes. The plan stage asks for the origins as data only (sp_trace_want_origins): they
 * are then recorded from where the debugging trace would start, without any attribute, and
 * the passes that replace a value carry its origins over (sp_trace_move: data-flow edges
 * sunk onto their owners, named computations exported as calls).
 *
 * Nodes. A sharding is stored in a node: a value (sp_value *: a func argument, an op result,
 * a data-flow edge, a manual computation body argument without edge). A func result shares
 * the node of the value returned there (sp_trace_func_result_node), but "self" on it means
 * the func result itself (sp_trace_func_result). Each node maps axes to origins:
 *   input i, output i       the func's argument / result i as the user wrote it,
 *   constraint_K            the K-th sdy.sharding_constraint of the module (pre-order),
 *   mc_K_input i / output i the in / out sharding i of the K-th sdy.manual_computation.
 * An origin remembers the node that introduced it; printed on that node it reads "self".
 * Entries are only ever added (a sub-axis later grown keeps its older entry, as in Shardy).
 *
 * Steps. Every propagation step that gives some tensor an axis it did not have is numbered
 * (0, 1, ...; the numbering continues across passes of the module). For each such axis the
 * step records the tensor it came from (the first tensor, operands before results, whose old
 * sharding holds the whole new dimension sharding of a receiving tensor; else the first that
 * holds the axis) and every tensor that gained it; the op keeps the first record per axis.
 * A func result step belongs to the func (Shardy keeps those on the func's first result).
 *
 * Memory: malloc'd, owned by the module (freed with it, or by sp_trace_free). Keys are
 * pointers into the module; a trace stays valid while the nodes and ops it names exist.
 */
#ifndef SP_PROPAGATION_TRACE_H
#define SP_PROPAGATION_TRACE_H

#include <stdbool.h>

#include "ir/err.h"
#include "ir/ir.h"

typedef enum sp_origin_kind {
  SP_ORIGIN_INPUT,
  SP_ORIGIN_OUTPUT,
  SP_ORIGIN_CONSTRAINT,
  SP_ORIGIN_MC_INPUT,
  SP_ORIGIN_MC_OUTPUT
} sp_origin_kind;

typedef struct sp_origin {
  sp_origin_kind kind;
  int index;              /* argument / result / operand number (not for constraints) */
  int id;                 /* constraint or manual computation number */
  const void *owner;      /* the node that introduced it */
} sp_origin;

typedef struct sp_axis_origin {
  sp_axis_ref axis;
  sp_origin origin;
} sp_axis_origin;

/* One end of an edge: operand-i or result-i of the op (for a data-flow edge op its sources
 * are the operands and the edge itself the result; for a func result the returned value is
 * operand-0 and the func result result-0). */
typedef struct sp_edge_end {
  bool result;
  int index;
} sp_edge_end;

typedef struct sp_trace_edge {
  int step;
  sp_axis_ref axis;
  sp_edge_end source;
  int ntargets;
  sp_edge_end *targets;   /* operands first, then results, by index */
} sp_trace_edge;

typedef struct sp_trace sp_trace;

/* The module's trace, created (empty) when absent; NULL on out-of-memory. */
sp_trace *sp_trace_of(sp_module *m);
/* The module's trace or NULL, never creating one. */
const sp_trace *sp_trace_get(const sp_module *m);
void sp_trace_free(sp_trace *t);

/* Turns recording on for origins and/or edges (a pass with the debugging options calls this
 * before it changes anything; recording stays on for later passes of the module). The first
 * call that turns origins on names every sdy.sharding_constraint and sdy.manual_computation
 * (`sdy.sharding_origin_name` = "constraint_K" / "mc_K") and gives the func arguments and
 * results, constraints and manual computation in/out shardings their own origins. */
int sp_trace_enable(sp_module *m, bool origins, bool edges, sp_err *err);
/* Asks for the origins as data only: the next sp_trace_enable (whatever its arguments; the
 * pipeline and the propagation passes call it where their debugging trace starts) records
 * origins as for debug-sharding-origins, but no pass writes attributes for them (constraints
 * and manual computations are numbered without sdy.sharding_origin_name) unless a pass asks
 * for debug-sharding-origins itself. */
int sp_trace_want_origins(sp_module *m, sp_err *err);
bool sp_trace_wants_origins(const sp_module *m);
/* A pass replaced the value (node) `from` by `to`: `to` gets the origins of `from` it does not
 * have (an origin `from` introduced is now `to`'s own). No trace or no origins: nothing. */
int sp_trace_move(sp_trace *t, const void *from, const void *to);
bool sp_trace_records_origins(const sp_trace *t);
bool sp_trace_records_edges(const sp_trace *t);

/* One propagation step over n = noperands + nresults tensors: nodes[i] the node each is
 * stored in, before[i] its sharding as the step saw it, after[i] its sharding after the step
 * (NULL = unchanged). `op` is the op the edges go on (the func op for func results). A step
 * that adds no axis records nothing and takes no number. */
int sp_trace_step(sp_trace *t, const sp_mesh *mesh, const void *op, int noperands, int nresults,
                  const void *const *nodes, sp_sharding *const *before,
                  sp_sharding *const *after);

/* sdy-apply-sharding-constraints gave value `x` the sharding `s` of `anchor` (a sharding
 * constraint, or a manual computation whose operand `index` x is): x's axes take the
 * anchor's origins, and the edges go on `edge_op` (the constraint, or the body argument's
 * data-flow edge) as result-0 -> [operand-0], in one new step. */
int sp_trace_applied(sp_trace *t, const sp_mesh *mesh, sp_op *anchor, int index, sp_op *edge_op,
                     sp_value *x, const sp_sharding *s);

/* The origins of a node in the order they were added (NULL, *n = 0 when it has none); valid
 * until the trace records more. */
const sp_axis_origin *sp_trace_origins(const sp_trace *t, const void *node, int *n);
/* The edges kept for an op (or func), in the order they were recorded. */
const sp_trace_edge *sp_trace_edges(const sp_trace *t, const void *op, int *n);
/* The number of numbered steps so far. */
int sp_trace_steps(const sp_trace *t);

/* The key that stands for a func result in origins ("self" on the result) and in steps. */
static inline const void *sp_trace_func_result(const sp_op *fn, int i) {
  return &fn->func->result_shardings[i];
}
/* The node whose origins a func result shows: the value the function returns there (Shardy
 * keeps one origin map for both, so an axis both had from the start shows the origin that was
 * recorded first: the argument's, for a returned argument). NULL if there is none. */
const void *sp_trace_func_result_node(const sp_op *fn, int i);

/* An origin as Shardy prints it on `node`: "self", "input: 0", "output: 1", "constraint_2",
 * "mc_0_input: 1", "mc_0_output: 0". Appended to `sb`. */
void sp_trace_origin_print(sp_strbuf *sb, const sp_origin *o, const void *node);

#endif /* SP_PROPAGATION_TRACE_H */
