/*
 * plan.h - the plan stage: the engine's front door. One call takes a module (parsed, or MLIR
 * text), a cluster and options, runs propagation and (with a cluster) the cost search, and
 * returns the plan as data; one JSON writer and reader turn a plan into text and back.
 *
 *   sp_plan_options o;
 *   sp_plan_options_init(&o);                  // propagation + search, Shardy's pipeline
 *   sp_plan_input in = {.text = mlir, .len = n, .filename = "request"};
 *   sp_plan *p;
 *   int rc = sp_plan_run(&in, cluster, &o, &p, &err);   // cluster NULL: propagation only
 *   char *json = sp_plan_to_json_text(p, false);        // or read p->values[i] ...
 *   free(json); sp_plan_free(p);
 *
 * What a plan holds (DESIGN.md section 6):
 *   - every value's sharding, addressed by position (sp_plan_pos: function index, argument /
 *     function result / op result, op number in pre-order over the module, result number),
 *     with the printed name ("%arg0", "%3") as a label; per value the structured axes per
 *     dimension, the `#sdy.sharding<...>` text, a JAX PartitionSpec string and a GSPMD
 *     `{devices=[...]...}` string;
 *   - the module as sdy text (what shardplan-opt prints);
 *   - each op's factor table before and after propagation and every conflict met (the JSON of
 *     propagation/report.h and propagation/conflict.h, kept as cJSON);
 *   - with the search: every collective the export passes insert for the chosen shardings
 *     (plan/exported.h; kind, axes, bytes, estimated time, the value and op by position), the cost totals (compute, communication, resharding, total, peak memory
 *     per device, memory limit), solver statistics (status, cost, bound, gap, seconds, model
 *     size before and after the solver's reductions), the mesh shape and rank mapping
 *     (device_of: mesh coordinate -> cluster device);
 *   - per value, where each axis came from as Shardy's debug-sharding-origins names it
 *     (propagation/trace.h, recorded as data: no attribute in the module text);
 *   - warnings (ir/diag.h), e.g. an op without a sharding rule, planned conservatively.
 * Op numbers: the ops of the module body in pre-order (nested ops included, the module op
 * not), counted from 0 before propagation; an op inserted by the passes has no number before
 * and is numbered after the last original op.
 *
 * Determinism: the same input, cluster and options give the same plan bytes, except that a
 * wall-clock time limit or deadline can cut the search short (then solver.status is
 * "timeout" and solver.gap says how far from proven the plan is) and the solver's seconds.
 * Without a time limit the search is bounded by work counts (heuristic work, simplex
 * iterations, branch-and-bound nodes), so its answer does not depend on the machine's load.
 *
 * Errors: sp_plan_run returns SP_OK and a plan, or a negative status, no plan, and `err`
 * naming the problem and its place ("request:3:14: unknown axis \"c\""): SP_EINVAL for input
 * that does not parse, verify or plan; SP_ENOTFOUND when no valid plan exists (nothing fits
 * the memory); SP_ETIMEOUT when cancelled, or when the deadline passed before propagation
 * finished; SP_ENOMEM.
 *
 * Thread safety: sp_plan_run may run on many threads at once, each with its own input,
 * options and cancel flag (the cluster may be shared: it is read only). A plan is immutable
 * once returned and may be read from any thread. Nothing here prints.
 *
 * Memory: a plan owns everything it points to (one arena and the cJSON trees); free it with
 * sp_plan_free. sp_plan_run does not keep the input: a parsed module passed in is transformed
 * in place (the caller still owns and frees it); a module parsed from text is freed before
 * returning.
 */
#ifndef SP_PLAN_PLAN_H
#define SP_PLAN_PLAN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/arena.h"
#include "ir/err.h"
#include "ir/ir.h"
#include "ir/run_ctl.h"
#include "search/cluster.h"

typedef struct cJSON cJSON;

/* ------------------------------------------------------------------ the plan as data */

typedef enum sp_plan_value_kind {
  SP_PLAN_ARG = 0,      /* argument `index` of function `func` */
  SP_PLAN_FUNC_RESULT,  /* result `index` of function `func` (its result sharding) */
  SP_PLAN_OP_RESULT     /* result `index` of op number `op` */
} sp_plan_value_kind;

/* Where a value is. */
typedef struct sp_plan_pos {
  sp_plan_value_kind kind;
  int func;             /* index of the func.func among the module body's functions */
  int op;               /* SP_PLAN_OP_RESULT: the op's number; -1 otherwise */
  int index;            /* argument, function-result or op-result number */
} sp_plan_pos;

/* One dimension of a sharding: its axes major to minor ("x", or "x:(1)2" for a sub-axis). */
typedef struct sp_plan_dim {
  int naxes;
  const char **axes;
  bool closed;
  int priority;         /* -1: none */
} sp_plan_dim;

/* Where one axis of a value's sharding came from, as Shardy names it (its
 * debug-sharding-origins attribute): "self" (the value's own annotation), "input: 0" /
 * "output: 1" (the enclosing function's argument / result as the user wrote it),
 * "constraint_2" (the module's sdy.sharding_constraint 2, pre-order, counted when
 * propagation started), "mc_0_input: 1" / "mc_0_output: 0" (an in / out sharding of
 * sdy.manual_computation 0). */
typedef struct sp_plan_origin {
  const char *axis;     /* "x", or "x:(1)2" for a sub-axis */
  const char *origin;
} sp_plan_origin;

typedef struct sp_plan_value {
  sp_plan_pos pos;
  const char *name;     /* printed name: "%arg0", "%3", "%2#1"; a label only */
  const char *type;     /* "tensor<8x16xf32>" */
  bool sharded;         /* has a sharding; the fields below are empty otherwise */
  const char *mesh;     /* mesh symbol name, or the inline mesh's text */
  int rank;
  sp_plan_dim *dims;    /* [rank] */
  int nreplicated, nunreduced;
  const char **replicated, **unreduced;
  const char *sdy;      /* #sdy.sharding<@mesh, [{"x"}, {}]> */
  const char *pspec;    /* PartitionSpec('x', None) */
  const char *gspmd;    /* {devices=[2,1,4]<=[8] last_tile_dim_replicate} */
  /* Shardy's sharding origins, recorded while propagating (sp_plan_options.no_origins off),
   * sorted by axis as Shardy's attribute is; an axis the value has and the list lacks got
   * there another way (the cost search, an export pass). May list an axis the final
   * sharding no longer has (Shardy keeps an origin once recorded). */
  int norigins;
  sp_plan_origin *origins;
} sp_plan_value;

/* One op: its place and factor tables (the propagation report's entry for it). */
typedef struct sp_plan_op {
  int op;               /* number (see the top comment) */
  const char *name;     /* "stablehlo.dot_general" */
  int line, col;        /* in the input; 0 if unknown */
  cJSON *table;         /* {"op", "name", "line", "col", "rule", "erased", "before", "after"}
                           (propagation/report.h) and "operand_values": the index in
                           `values` of each operand (-1: not listed); owned by the plan */
} sp_plan_op;

typedef struct sp_plan_collective {
  const char *kind;     /* "all-gather", "reduce-scatter", "all-reduce", "all-to-all",
                           "all-slice" (local: 0 bytes, 0 s), "collective-permute" */
  const char *axes;     /* "\"data\", \"model\"" */
  int64_t group_size;   /* devices in one group */
  double bytes;         /* of the whole tensor moved */
  double seconds;       /* estimated */
  sp_plan_pos value;    /* the value moved */
  const char *value_name;
  int op;               /* the op where it happens (consumer or reducing op); -1 unknown */
  const char *op_name;
  int line;
  int operand;          /* consumer operand; -1 for an op's own reduction */
} sp_plan_collective;

/* The compute time of one op under the plan (per device per step). */
typedef struct sp_plan_op_cost {
  int op;               /* op number */
  const char *name;     /* "stablehlo.dot_general" */
  double compute_s;
} sp_plan_op_cost;

typedef struct sp_plan_costs {
  double compute_s, collective_s, reshard_s, comm_s, total_s;  /* per device per step */
  double peak_memory_bytes, memory_limit_bytes;
} sp_plan_costs;

typedef struct sp_plan_solver {
  const char *status;   /* "optimal", "feasible", "timeout", "infeasible", "unknown" */
  int64_t cost, bound;  /* objective units (ns + memory tie-break); bound INT64_MIN: none */
  double gap;
  double build_s, solve_s;
  int ops, nodes, edges, followers, fixed_nodes;
  int64_t strategies, pairs, ilp_cols, ilp_rows;
  int red_nodes, red_edges, merged;
  int64_t red_strategies, red_pairs, dominated;
  int tie_groups, tied_nodes;
} sp_plan_solver;

typedef struct sp_plan_mesh_axis {
  const char *name;
  int64_t size;
  const char *link;     /* the link kind the axis crosses ("nvlink", ...) */
  double alpha_s, bandwidth, traffic_bytes;
} sp_plan_mesh_axis;

typedef struct sp_plan_mesh {
  const char *name;
  int naxes;
  sp_plan_mesh_axis *axes;
  int64_t ndevices;
  int64_t *device_of;   /* [ndevices]: mesh coordinate (row-major) -> cluster device */
  bool placement_auto;  /* placed by traffic (rank mapping) rather than as given */
  bool shape_searched;
} sp_plan_mesh;

typedef struct sp_plan_warning {
  const char *severity; /* "error", "warning", "remark", "note" */
  int line, col;
  const char *message;
} sp_plan_warning;

typedef struct sp_plan {
  sp_arena *arena;      /* owns the strings and arrays below */
  const char *filename;
  const char *module;   /* the module in sdy_opt's text form */
  int nvalues;
  sp_plan_value *values;/* functions' arguments and results, then op results in op order */
  int nops;
  sp_plan_op *ops;      /* ops with a sharding rule, in op order */
  cJSON *conflicts;     /* array of conflict objects (propagation/conflict.h); owned */
  int nwarnings;
  sp_plan_warning *warnings;
  bool searched;        /* the fields below are filled */
  sp_plan_costs costs;
  sp_plan_solver solver;
  sp_plan_mesh mesh;
  int ncollectives;
  sp_plan_collective *collectives;
  int nop_costs;        /* every op the search priced, with its compute time */
  sp_plan_op_cost *op_costs;
  /* The search's strategy choice (one index per node of its strategy graph), for a warm
   * start of a later search of the same request (sp_plan_options.incumbent). Not part of
   * the JSON. 0 / NULL without a search. */
  int nchoice;
  const int *choice;
} sp_plan;

void sp_plan_free(sp_plan *p);

/* Releases what the engine keeps per thread (the solver's, sp_sg_thread_end: GLPK's
 * environment, created on a thread's first solve). A host thread that ran sp_plan_run calls
 * it before it exits; harmless otherwise. */
void sp_plan_thread_end(void);

/* ------------------------------------------------------------------ making a plan */

typedef enum sp_plan_mode {
  SP_PLAN_PROPAGATE = 0,       /* propagation only */
  SP_PLAN_PROPAGATE_SEARCH     /* propagation, then the cost search (needs a cluster) */
} sp_plan_mode;

typedef enum sp_plan_choice {
  SP_PLAN_DEFAULT = -1,        /* the search options' choice, else the search's default */
  SP_PLAN_GIVEN = 0,
  SP_PLAN_AUTO = 1
} sp_plan_choice;

/* The propagation the pipeline runs between its import and export (every one of them after
 * the import, so func.call results are propagated through the callees alike). */
typedef enum sp_plan_strategy {
  SP_PLAN_USER_PRIORITY = 0,   /* Shardy's default: user priorities, op priorities, aggressive */
  SP_PLAN_OP_PRIORITY,
  SP_PLAN_AGGRESSIVE,
  SP_PLAN_BASIC
} sp_plan_strategy;

typedef struct sp_plan_options {
  sp_plan_mode mode;
  /* The propagation: a pass flag of the registry (plan/passes.h) without the dash and its
   * option text. NULL pass: "sdy-propagation-pipeline" (import with func.call handling,
   * user-priority propagation, export), with the search off or on; with it on and no option
   * text, "keep-shardings-open=true" (open dims stay open for the search, and every sharding is
   * closed after it); "" : no propagation. */
  const char *propagation;
  const char *propagation_options;
  /* With the pipeline (propagation NULL): its propagation step (propagation-pass=, see
   * propagation/pipeline.h). A named pass (propagation set) runs bare, without the import. */
  sp_plan_strategy strategy;
  /* The search (search/search_pass.h options text for whatever is not below, e.g.
   * "max-strategies=64 share-layers=false"); cluster= is ignored: the cluster argument is
   * used. */
  const char *search_options;
  double time_limit;           /* solver seconds for the whole search; <= 0: the search
                                  options' time-limit=, else none: the search is bounded by
                                  work (the same answer on any machine) and only the
                                  deadline can cut it short */
  double gap;                  /* relative gap to stop at; < 0: the search options' (0) */
  sp_plan_choice placement;    /* rank mapping by traffic (auto) or the mesh's devices */
  sp_plan_choice mesh_shape;   /* try every factorisation of the device count (auto) */
  bool no_tables;              /* leave out factor tables and conflicts (faster) */
  bool no_origins;             /* leave out Shardy's sharding origins (sp_plan_value) */
  /* Control (ir/run_ctl.h): absolute deadline in sp_clock_now() seconds (0: none), cancel
   * flag (may be NULL), progress callback (may be NULL). */
  double deadline;
  const atomic_int *cancel;
  sp_progress_fn progress;
  void *progress_ctx;
  /* A deadline another thread may move while the plan is made (ir/run_ctl.h; sp_clock_now()
   * microseconds, 0 = none); replaces `deadline` when set. The search then runs to it as it
   * is at each check (the time limit is not clamped to it at the start). */
  const atomic_llong *moving_deadline_us;
  /* A warm start: an earlier plan's `choice` for the same request (nincumbent entries), the
   * search's first incumbent. */
  int nincumbent;
  const int *incumbent;
  /* Snapshots: the best plan so far, handed out while the search goes on (a host whose
   * callers' deadlines come before the search's end). Once *snapshot_at_us (sp_clock_now()
   * microseconds; 0: never; another thread may move it) has passed, the search, at its next
   * check with a valid plan in hand, builds that plan complete, as sp_plan_run would return it
   * had the search been cut short there (solver.status "timeout"; its gap, 1 with no bound
   * when not known, see search/placement.h), calls on_snapshot(ctx, plan, NULL) on the
   * planning thread, and goes on; on_snapshot(ctx, NULL, err) when none could be built. The
   * callback owns the plan (sp_plan_free), moves *snapshot_at_us on (to its next time, or 0:
   * a time left in place is served once) and must not call into the engine for this module.
   * Snapshots do not change the search: the final plan is the one a run without them gives.
   * Without the search, or with either field NULL: none. */
  const atomic_llong *snapshot_at_us;
  void (*on_snapshot)(void *ctx, sp_plan *plan, const sp_err *err);
  void *snapshot_ctx;
} sp_plan_options;

/* Propagation + search with Shardy's defaults, no limits, no callbacks. */
void sp_plan_options_init(sp_plan_options *o);

/* The module to plan: a parsed module (transformed in place, still owned by the caller), or
 * MLIR text (`len` bytes, need not be NUL-terminated). */
typedef struct sp_plan_input {
  sp_module *module;
  const char *text;
  size_t len;
  const char *filename;        /* for messages; NULL: "<request>" */
} sp_plan_input;

/* Verifies, propagates and (with mode SP_PLAN_PROPAGATE_SEARCH and a cluster) searches, and
 * returns the plan in *out (see the top comment for errors, threads and memory). A cluster
 * given with mode SP_PLAN_PROPAGATE is ignored; SP_PLAN_PROPAGATE_SEARCH without one is
 * SP_EINVAL. */
int sp_plan_run(const sp_plan_input *in, const sp_cluster *cluster, const sp_plan_options *o,
                sp_plan **out, sp_err *err);

/* Builds the plan of a module as it stands (no passes run): the values, the module text and
 * the warnings in m->diags; `report` (may be NULL) the propagation report's JSON
 * ({"ops": [...], "conflicts": [...]}, taken over by the plan); `summary` (may be NULL) the
 * search's summary. This is what sp_plan_run ends with; shardplan-opt uses it too. */
struct sp_plan_summary;
int sp_plan_from_module(sp_module *m, cJSON *report, const struct sp_plan_summary *summary,
                        sp_plan **out, sp_err *err);

/* ------------------------------------------------------------------ JSON */

/* The whole plan:
 *   {"version": 1, "file": "...", "module": "...",
 *    "values": [<value>...], "ops": [<op>...], "conflicts": [...], "warnings": [...],
 *    "search": null | {"costs": {...}, "solver": {...}, "mesh": {...},
 *                      "collectives": [<collective>...],
 *                      "op_compute": [{"op", "name", "compute_s"}...]}}
 * New cJSON owned by the caller; NULL on out-of-memory. */
cJSON *sp_plan_to_json(const sp_plan *p);
/* As text (cJSON_Print, or unformatted); malloc'd, the caller frees; NULL on out-of-memory. */
char *sp_plan_to_json_text(const sp_plan *p, bool formatted);
/* Reads what sp_plan_to_json wrote back into a plan (writing it again gives the same JSON).
 * SP_EINVAL naming the first field that is missing or of the wrong type. */
int sp_plan_from_json(const char *text, size_t len, sp_plan **out, sp_err *err);

/* One element each, as the whole plan writes them (for a store that keeps a plan as rows a
 * dashboard page reads one by one):
 *   value:      {"pos": {"kind": "arg"|"func_result"|"op_result", "func", "op", "index"},
 *                "name", "type", "sharding": null | {"mesh", "dims": [{"axes": [...],
 *                "closed", "priority"}], "replicated", "unreduced", "sdy", "pspec", "gspmd"},
 *                "sharding_origins": {"x": "input: 0", ...} (only when it has origins)}
 *   op:         the report's op object (see sp_plan_op.table)
 *   collective: {"kind", "axes", "group_size", "bytes", "seconds", "value": <pos>,
 *                "value_name", "op", "op_name", "line", "operand"}
 *   conflict:   p->conflicts' element i (a copy)
 * New cJSON owned by the caller; NULL on out-of-memory or an index out of range. */
cJSON *sp_plan_value_to_json(const sp_plan_value *v);
cJSON *sp_plan_op_to_json(const sp_plan_op *op);
cJSON *sp_plan_collective_to_json(const sp_plan_collective *c);
cJSON *sp_plan_conflict_to_json(const sp_plan *p, int i);

#endif /* SP_PLAN_PLAN_H */
