/*
 * plan_search.h - the search stage: from a propagated module and a cluster to a module with
 * every value sharded, and a cost summary.
 *
 * The main function's top-level ops become a strategy graph (solver/solver.h):
 *   - a node per op with a sharding rule; its strategies come from strategies.h (mesh axes
 *     assigned to the rule's factors, agreeing with the shardings propagation left);
 *   - element-wise followers share their producer's node (EasyDist's coarsening): an
 *     element-wise op whose operand has the op's shape and the same given sharding as its
 *     result takes that operand's layout under every strategy of the operand's node; its
 *     compute joins the node's cost and its result the node's values;
 *   - a node per function argument and per constant (rank >= 1), whose strategies are its
 *     layouts, at no cost;
 *   - a fixed node (one strategy: the shardings as they are) per op the enumeration cannot
 *     express: ops without a rule (calls, control flow; their regions are not priced), or
 *     ops whose given shardings admit no whole-axis assignment (sub-axes).
 * Costs, in integer units of 1 ns (cost_model.h prices them in seconds):
 *   node:  compute time + the op's own all-reduce / reduce-scatter + the resharding between
 *          values of one node (a follower using two values of its node) + a memory tie-break
 *          of `mem_weight` units per MiB a device holds of the node's values (so that, among
 *          plans of equal time, the one that keeps less per device wins);
 *   edge:  for every operand whose value belongs to another node, the resharding time from
 *          the producer's layout to the layout the consumer wants (the collectives the export
 *          lowers that reshard into, cost_model.h); edges between the same two nodes are
 *          summed into one;
 *   state: a training step's state (a weight and its gradient or update: a state pair, see
 *          sp_plan_state_pair, as EasyDist's state_io_map) costs the resharding from the
 *          result's layout to the argument's, since the next step reads it there. Without
 *          it a gradient could stay reduce-scattered for free.
 * Memory: each node's usage is the bytes a device holds of its values, live from the first
 * definition to the last use among them (program order of the top-level ops; arguments from
 * time 0; values returned live to the end) - a conservative bound when followers extend a
 * node; the usage limit is the device memory (or `memory_limit`).
 *
 * sp_sg_solve (solver/solver.h) picks the strategies; the chosen layouts are written back into
 * the values (closed dims, replicated/unreduced axes and priorities kept) and into the main
 * function's result shardings. The summary is recomputed from the chosen strategies in
 * seconds (not from the rounded units).
 *
 * sp_plan_evaluate_module prices the shardings a module already has (every given sharding
 * counts as final; values without one are unsharded), choosing only what they leave open
 * inside an op (e.g. whether a contracting dimension is split, whether a sum stays partial
 * into the linear ops after it, as Megatron's backward sums its q/k/v input gradients before
 * one all-reduce), and changes nothing (the partial values are recorded). It is how a hand
 * plan (Megatron) is compared with a searched one under the same model.
 *
 * Layer sharing (unless no_share_layers; never when evaluating): nodes whose ops are
 * structurally identical - equal Weisfeiler-Lehman hashes over the def-use graph, see
 * plan_search.c - and whose strategy lists are identical form a tie group; the members are
 * chained with edges that forbid different strategy indices, so repeated layers get one
 * choice. The solver's bijective-edge reduction (sg_reduce_int.h) merges each chain into one
 * node: the group is one set of variables (the plan may cost more than an untied one).
 *
 * Partial sums (unless no_partial): a dot, or a reduce summing, whose
 * only use is an element-wise op linear in it also gets keep-partial strategies (strategies.h):
 * its result carries the reduction axes as unreduced axes and it pays no all-reduce. A
 * follower carries them on when it is linear in the value it follows (add, subtract, negate,
 * multiply, divide of a partial numerator, float convert), its own result has one such use
 * too, and, for add/subtract, every other operand may be partial as well; otherwise it reads
 * the value reduced. The all-reduce is paid where a consumer reads the sums whole: on that
 * edge, as the export lowers it (cost_model.h), and written back as Shardy's unreduced axes so
 * that the export inserts exactly it. docs/cost-model.md states the rule.
 *
 * Not modelled: partial sums through ops that are not element-wise (reshape, transpose,
 * broadcast take their operand whole), memory-bandwidth time of element-wise ops, the nested
 * regions of control flow.
 *
 * Determinism: the graph is built in program order with deterministic strategy orders; the
 * solver is deterministic unless its wall-clock time limit cuts it short.
 *
 * Memory: the graph and strategies live in a scratch arena freed before returning; new
 * shardings and the summary's lists live in the module's arena.
 */
#ifndef SP_SEARCH_PLAN_SEARCH_H
#define SP_SEARCH_PLAN_SEARCH_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/err.h"
#include "ir/ir.h"
#include "ir/module_copy.h"
#include "ir/strbuf.h"
#include "search/cluster.h"
#include "search/cost_model.h"
#include "solver/solver.h"

typedef struct cJSON cJSON;

/* A training state: argument `arg` of the main function is the state the next step reads,
 * result `result` the value this step produces for it (an updated weight, or the gradient
 * the optimizer applies to it). The result has to reach the argument's layout. */
typedef struct sp_plan_state_pair {
  int arg, result;
} sp_plan_state_pair;

typedef struct sp_search_incumbent sp_search_incumbent;   /* below */

typedef struct sp_plan_search_opts {
  const sp_cluster *cluster;  /* required */
  const char *mesh_name;      /* NULL: the module's only sdy.mesh */
  const int64_t *device_of;   /* mesh coordinate -> cluster device; NULL: the mesh's device ids,
                                 else the identity */
  double time_limit;          /* solver seconds; <= 0: none */
  double gap;                 /* stop at this relative gap; 0: prove optimality */
  int64_t work_limit;         /* solver heuristic work; 0: its default */
  uint64_t seed;
  int max_strategies;         /* per node, cheapest kept beyond; 0: 512 */
  double mem_weight;          /* cost units per MiB held per device (tie-break); < 0: 0 */
  double memory_limit;        /* bytes per device; 0: the device's memory */
  bool no_coarsen;            /* one node per op: no element-wise followers */
  bool no_reduce_scatter;     /* reductions only all-reduce */
  bool no_partial;            /* every reduction is all-reduced (or reduce-scattered) at its op:
                                 no partial sums carried into later ops */
  bool no_share_layers;       /* no ties between structurally identical nodes (the pass's
                                 share-layers=false); ties are on by default */
  bool uniform_links;         /* price every mesh axis with the fastest link any of them
                                 crosses: a plan free of placement bias, whose per-axis
                                 traffic rank mapping reads (placement.h); its costs are not
                                 the cluster's */
  /* State pairs, in addition to those the module declares with `tf.aliasing_output = R` on
   * an argument. */
  int nstate;
  const sp_plan_state_pair *state;
  /* A warm start: the strategy choice of an earlier plan of the same module and options
   * (sp_plan_summary.choice), given to the solver as its first incumbent; ignored when its
   * length is not the strategy graph's node count or it is not a valid plan there. */
  int nincumbent;
  const int *incumbent;
  /* The solver's best plan so far, offered while it goes on (ir/run_ctl.h snapshot_at_us: once
   * the module's ctl says a snapshot is due): called on the searching thread, between solver
   * steps, with a handle the callee may turn into a planned copy of the module
   * (sp_search_incumbent_plan) during the call; also every 256 ops while the graph is built,
   * with NULL (no incumbent yet: the callee may serve a plan of its own). The placement search
   * (placement.h) sets it per configuration and decides what to hand out. NULL: none. */
  void (*on_best)(void *ctx, const sp_search_incumbent *inc);
  void *best_ctx;
  /* The caller has a plan in hand (placement.c, from an earlier configuration): a deadline
   * (ir/run_ctl.h) that passes while the strategy graph is built ends this search with
   * SP_ETIMEOUT rather than building on to a first plan of its own. */
  bool cut_short;
  const char *dump_graph;     /* write each strategy graph before it is solved (IOPDDL JSON,
                                 solver/solver.h) to this file; NULL: none */
} sp_plan_search_opts;

void sp_plan_search_opts_init(sp_plan_search_opts *o);

/* The compute time of one op under the chosen plan. */
typedef struct sp_plan_op_compute {
  const sp_op *op;
  double seconds;
} sp_plan_op_compute;

/* A tie group: nodes the search forced to one strategy index (identical repeated layers).
 * values[k] is the first value of member k (an op's result or an argument). */
typedef struct sp_plan_tie_group {
  int n;
  sp_value **values;
} sp_plan_tie_group;

/* One collective of the plan: an op's own reduction, or a resharding on an edge. */
typedef struct sp_search_collective {
  const char *value;          /* the value moved, e.g. "%12" */
  const char *op;             /* the op where it happens (consumer, or the reducing op) */
  int line;                   /* that op's line, 0 if unknown */
  int operand;                /* consumer operand index; -1 for an op's own collective */
  const char *axes;           /* the group's axes, e.g. "\"data\", \"model\"" */
  sp_collective c;
  const sp_value *value_ref;  /* the value moved and the op, as IR pointers (the plan stage */
  const sp_op *op_ref;        /* addresses them by position) */
} sp_search_collective;

/* An operand of a planned op that the op takes in another layout than its value's. */
typedef struct sp_plan_operand_reshard {
  sp_op *op;
  int operand;
  sp_sharding *sharding;      /* the layout the op's strategy wants */
} sp_plan_operand_reshard;

/* A value the plan keeps partial while evaluating a given plan: its sharding with the unreduced
 * axes (the given shardings are not rewritten when evaluating). */
typedef struct sp_plan_value_sharding {
  sp_value *value;
  sp_sharding *sharding;
} sp_plan_value_sharding;

/* One configuration the placement search planned (placement.h). */
typedef struct sp_plan_trial {
  const char *shape;          /* "data=2, model=4" */
  const char *devices;        /* the placement, "0,1,2,..." */
  const char *error;          /* why it has no plan (e.g. a given sharding does not divide
                                 under this shape); NULL when planned */
  double total_s;             /* the plan's time per step (planned trials) */
  int64_t cost;
  int64_t bound;              /* its search's lower bound (INT64_MIN: none) */
  sp_sg_status status;        /* a trial without a plan: infeasible when proven so */
  bool probe;                 /* planned with uniform links to measure traffic; its cost is
                                 not comparable and it is never chosen */
  bool chosen;
} sp_plan_trial;

typedef struct sp_plan_summary {
  /* The plan, per device (seconds, bytes). */
  double compute_s;
  double collective_s;        /* ops' own all-reduces / reduce-scatters */
  double reshard_s;           /* resharding between producers and consumers */
  double comm_s;              /* collective_s + reshard_s */
  double total_s;             /* compute_s + comm_s */
  double peak_memory_bytes;   /* highest live bytes on a device */
  double memory_limit_bytes;
  int64_t cost;               /* objective in units (ns + memory tie-break) */
  int64_t bound;              /* solver's lower bound (INT64_MIN if none) */
  double gap;
  sp_sg_status status;
  /* The problem. */
  int ops;                    /* top-level ops of the main function */
  int nodes, edges, followers, fixed_nodes;
  int64_t strategies;         /* node variables */
  int64_t pairs;              /* edge variables */
  int64_t ilp_cols, ilp_rows; /* of the last ILP the solver built (0 if none) */
  /* The model the solver worked on after its exact reductions (sg_reduce_int.h): tied layers
   * merged into one node each, dominated strategies dropped, leaves and chains folded. */
  int red_nodes, red_edges;
  int64_t red_strategies, red_pairs;
  int merged;                 /* nodes merged into another (tied layers: one variable) */
  int64_t dominated;          /* strategies dropped as dominated */
  int ntie_groups, tied_nodes;  /* layer sharing: groups and the nodes in them; `edges`
                                   includes the tie_edges (tied_nodes - ntie_groups) */
  sp_plan_tie_group *ties;      /* [ntie_groups] (module arena) */
  double build_s, solve_s;    /* wall seconds (reporting only) */
  /* The placement. */
  const char *mesh_name;
  const sp_mesh *mesh;        /* the module's mesh */
  bool no_reduce_scatter;     /* the cluster's runtime has no reduce-scatter (cluster.h) */
  int mesh_axes;
  sp_axis_cost axis[SP_MAX_MESH_AXES_CLUSTER];
  int64_t ndevices;
  const int64_t *device_of;   /* [ndevices] (module arena) */
  /* The solver's choice: a strategy index per node of the strategy graph (module arena); the
   * same module and options build the same graph, so it warm-starts a later search
   * (sp_plan_search_opts.incumbent). */
  int nchoice;
  const int *choice;
  /* The compute time of each op the plan prices (an element-wise follower's own, apart from
   * its node's), in program order (module arena): what the dashboard charts per op. */
  int nop_compute;
  sp_plan_op_compute *op_compute;
  /* Every collective of the plan, in program order (module arena). */
  int ncollectives;
  sp_search_collective *collectives;
  /* Bytes a device sends per step over the groups of each mesh axis (a collective over
   * several axes counts for each of them): what rank mapping orders the axes by. */
  double axis_traffic[SP_MAX_MESH_AXES_CLUSTER];
  /* Filled by the placement search (placement.h), zero otherwise: every mesh shape and
   * device placement it planned, in order, and whether the placement was its choice. */
  bool placement_auto;        /* the device placement was chosen by rank mapping */
  bool shape_auto;            /* the mesh shape was chosen among factorisations */
  int ntrials;
  sp_plan_trial *trials;
  /* The pass's report=FILE (module arena), NULL otherwise: where the caller writes the JSON. */
  const char *report_path;
  /* Operands the chosen strategies take in another layout than their value's (module arena):
   * the plan's resharding edges, free slices included. sp_plan_insert_operand_reshards turns
   * them into sdy.reshard ops so the printed module carries the whole plan. */
  int noperand_reshards;
  sp_plan_operand_reshard *operand_reshards;
  /* Results of the main function that a training state pair sends back in its argument's
   * layout (op: the func.return, operand: the result index, sharding: the argument's layout),
   * as priced; sp_plan_insert_operand_reshards makes them the function's result shardings.
   * Recorded when evaluating too (nothing else is written then). */
  int nstate_results;
  sp_plan_operand_reshard *state_results;
  /* When evaluating: the values the chosen strategies keep partial (module arena), as priced;
   * sp_plan_insert_operand_reshards gives them their unreduced axes. */
  int npartial_values;
  sp_plan_value_sharding *partial_values;
} sp_plan_summary;

/* ------------------------------------------------------------------ snapshots */

/* A plan handed out while the search goes on: a copy of the module with the plan written
 * into it (value and result shardings, the operand reshards inserted, the mesh with its
 * placement), paired with the module searched (ir/module_copy.h), and its summary, whose
 * pointers into a module all point into the copy and whose lists live in the copy's arena.
 * Memory: the copy is owned by the snapshot (sp_module_copy_free). */
typedef struct sp_search_snapshot {
  sp_module_copy copy;
  sp_plan_summary summary;
} sp_search_snapshot;

/* The solver's best plan of one search (sp_plan_search_opts.on_best): its cost and the bound
 * proven so far in objective units (INT64_MIN: none), and whether the search prices every
 * axis alike (uniform_links: costs not the cluster's). Valid during the callback only. */
struct sp_search_incumbent {
  int64_t cost, bound;
  bool uniform_links;
  struct sp_search_run *run;  /* private: the search it belongs to */
  const int *choice;
};

/* The incumbent as a planned copy of the module (see sp_search_snapshot), status "timeout";
 * `axis` (NULL: the search's) prices the communication of the copy's summary (the cluster's
 * links for an incumbent of uniform_links). The module searched is left as it was. SP_ENOMEM,
 * SP_EINTERNAL. */
int sp_search_incumbent_plan(const sp_search_incumbent *inc, const sp_axis_cost *axis,
                             sp_search_snapshot *out, sp_err *err);

/* A copy of `m`, made in `into` (an empty module that belongs to *out from the call on; NULL:
 * a new one), with the plan `s` records for `m` (its shardings written into `m` now) carried
 * over: the summary's pointers moved to the copy, its operand reshards inserted there. */
int sp_search_copy_planned(sp_module *m, const sp_plan_summary *s, sp_module *into,
                           sp_search_snapshot *out, sp_err *err);

/* Inserts `sdy.reshard` before each recorded operand (see sp_plan_summary.operand_reshards)
 * and routes the operand through it, sets the state results' shardings
 * (sp_plan_summary.state_results) and the partial values' (sp_plan_summary.partial_values). Call once, on the module the summary was planned on (also
 * after sp_plan_evaluate_module, to make a given plan's reshards explicit). SP_ENOMEM. */
int sp_plan_insert_operand_reshards(sp_module *m, const sp_plan_summary *s, sp_err *err);

/* Searches and writes the plan into `m` (see the top comment). Errors: SP_EINVAL for a module
 * the search cannot work on (no main function, no mesh or several without `mesh_name`,
 * shardings naming unknown axes, a mesh larger than the cluster), SP_ENOTFOUND when the
 * solver finds no valid plan (e.g. nothing fits the memory), SP_ELIMIT, SP_ENOMEM. */
int sp_plan_search_module(sp_module *m, const sp_plan_search_opts *o, sp_plan_summary *out,
                          sp_err *err);

/* Prices the shardings `m` already has (see the top comment); `m` is not changed. */
int sp_plan_evaluate_module(sp_module *m, const sp_plan_search_opts *o, sp_plan_summary *out,
                            sp_err *err);

/* The main function (sp_module_main_func: Shardy's rule) when it has a body, or NULL. */
sp_op *sp_plan_main_func(sp_module *m);
/* The sdy.mesh op the search plans: the one named `name`, or the module's only mesh when
 * `name` is NULL. NULL with SP_EINVAL in `err` when there is none or several. */
sp_op *sp_plan_mesh_op(sp_module *m, const char *name, sp_err *err);

/* The summary as text for stderr:
 *   shardplan-search: compute 3.1 ms, communication 0.7 ms (...), peak memory 1.2 GiB / 80 GiB
 * followed by the solver line and the problem size. */
void sp_plan_summary_print(sp_strbuf *sb, const sp_plan_summary *s);
/* The summary as JSON (for the report); NULL on out-of-memory. */
cJSON *sp_plan_summary_to_json(const sp_plan_summary *s);

#endif /* SP_SEARCH_PLAN_SEARCH_H */
