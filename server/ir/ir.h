/*
 * ir.h - the in-memory graph: types, attributes, values, ops, blocks, regions, modules.
 *
 * The shape follows MLIR, so that StableHLO + sdy text maps onto it one to one:
 *   module (an op of kind SP_OP_MODULE) -> one region -> one block -> ops
 *   (sdy.mesh ops, func.func ops) -> each func has a body region -> blocks -> ops -> regions...
 * An op has operands (uses of values), results (values it defines), named attributes and
 * regions. A value is an op result or a block argument; it knows its type, its sharding and
 * its uses. Use lists are kept in MLIR order (newest use first), because propagation visits
 * users in that order.
 *
 * Shardings live on values (value->sharding), whatever the text form they came from: func
 * argument attributes, an op's `sdy.sharding` per-value list, the inline sharding of
 * sdy.sharding_constraint / sdy.reshard / sdy.data_flow_edge, the out_shardings of manual and
 * named computations. Func result shardings live in the func's info. The sharding rule of an op
 * (`sdy.sharding_rule`) is an attribute of kind SP_ATTR_RULE.
 *
 * Attributes that the rules and passes read are structured (ints, int lists, enums, shardings,
 * axes, rules, meshes) under the names of the table in op_attrs.h; everything else is kept as
 * verbatim MLIR text (SP_ATTR_TEXT) and printed back as it came.
 *
 * Memory: everything belongs to the module's arena and is freed with sp_module_free(). Ops
 * that are erased stay allocated until then. Not thread-safe.
 */
#ifndef SP_IR_H
#define SP_IR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/arena.h"
#include "ir/err.h"
#include "ir/mesh.h"
#include "ir/rule.h"
#include "ir/sharding.h"
#include "ir/strbuf.h"

/* ------------------------------------------------------------------ op kinds */

typedef enum sp_op_kind {
  SP_OP_UNKNOWN = 0,
#define SP_OP(e, n) SP_OP_##e,
#include "ir/op_kind.def"
#undef SP_OP
  SP_OP_KIND_COUNT
} sp_op_kind;

/* The kind for a full op name ("stablehlo.add"), SP_OP_UNKNOWN if not listed. */
sp_op_kind sp_op_kind_from_name(const char *name);
/* The full name of a known kind ("stablehlo.add"); "" for SP_OP_UNKNOWN. */
const char *sp_op_kind_name(sp_op_kind kind);

/* ------------------------------------------------------------------ locations */

typedef struct sp_loc {
  int line;   /* 1-based; 0 = unknown (created by a pass) */
  int col;    /* 1-based */
} sp_loc;

/* ------------------------------------------------------------------ types */

#define SP_DYN_DIM INT64_MIN   /* a '?' dimension */

typedef enum sp_type_kind {
  SP_TYPE_TENSOR,   /* tensor<2x?x8xf32>, tensor<f32>, tensor<*xf32> (rank -1) */
  SP_TYPE_TOKEN,    /* !stablehlo.token */
  SP_TYPE_TUPLE,    /* tuple<...> */
  SP_TYPE_OTHER     /* anything else (i32 scalars, other dialect types): kept as text */
} sp_type_kind;

typedef struct sp_type {
  sp_type_kind kind;
  int rank;                 /* tensors: number of dims, -1 when unranked */
  int64_t *dims;            /* tensors: sizes, SP_DYN_DIM for '?' */
  const char *elem;         /* tensors: element type text, e.g. "f32", "complex<f32>" */
  const char *encoding;     /* tensors: verbatim encoding after ',', or NULL */
  int nelems;               /* tuples */
  struct sp_type **elems;   /* tuples */
  const char *text;         /* SP_TYPE_OTHER and tokens: the verbatim type text */
} sp_type;

sp_type *sp_type_tensor(sp_arena *a, int rank, const int64_t *dims, const char *elem);
bool sp_type_equal(const sp_type *x, const sp_type *y);
bool sp_type_is_static_tensor(const sp_type *t);    /* ranked, no '?' */
/* Same rank and sizes ('?' matches only '?'), whatever the element types: the shape test the
 * verifier, the rules and the search share. Inline: the rules call it on hot paths. */
static inline bool sp_type_same_dims(const sp_type *x, const sp_type *y) {
  if (x->rank != y->rank) return false;
  for (int d = 0; d < x->rank; d++)
    if (x->dims[d] != y->dims[d]) return false;
  return true;
}
int64_t sp_type_num_elements(const sp_type *t);     /* static tensors; -1 otherwise or when
                                                      the count does not fit in int64 */
#define SP_TYPE_MAX_BITS 16777215 /* MLIR's widest integer or float type */
int sp_type_elem_bits(const sp_type *t);            /* f32 -> 32, i1 -> 1, bf16 -> 16; 0 unknown */
void sp_type_print(sp_strbuf *sb, const sp_type *t);

/* ------------------------------------------------------------------ attributes */

typedef struct sp_ints {
  int n;
  int64_t *v;
} sp_ints;

typedef enum sp_attr_kind {
  SP_ATTR_UNIT,        /* present, no value */
  SP_ATTR_BOOL,        /* b */
  SP_ATTR_INT,         /* i */
  SP_ATTR_INTS,        /* ints */
  SP_ATTR_STR,         /* s: a string literal's contents (unescaped) */
  SP_ATTR_SYMBOL,      /* s: a symbol reference without '@' */
  SP_ATTR_ENUM,        /* s: a bare keyword such as LT, FORWARD, FFT */
  SP_ATTR_TEXT,        /* s: uninterpreted attribute, verbatim MLIR text */
  SP_ATTR_SHARDING,    /* sharding */
  SP_ATTR_SHARDINGS,   /* shardings: a list, e.g. in_shardings */
  SP_ATTR_AXES,        /* axes: a list of axis refs, e.g. manual_axes */
  SP_ATTR_RULE,        /* rule */
  SP_ATTR_MESH,        /* mesh */
  SP_ATTR_DIM_AXES,    /* dim_axes: one axis list per tensor dimension, e.g. gathering_axes */
  SP_ATTR_ALL_TO_ALL   /* all_to_all: the params of sdy.all_to_all */
} sp_attr_kind;

/* One parameter of sdy.all_to_all: `{"x", "y"}: 0->2` moves axes from src_dim to tgt_dim. */
typedef struct sp_all_to_all_param {
  int naxes;
  sp_axis_ref *axes;
  int64_t src_dim, tgt_dim;
} sp_all_to_all_param;

/* [{"x"}: 0->1, {"y"}: 1->3] */
void sp_all_to_all_params_print(sp_strbuf *sb, const sp_all_to_all_param *v, int n);

typedef struct sp_attr {
  const char *name;
  sp_attr_kind kind;
  union sp_attr_value {   /* tagged: UBSan would name an untagged one by its file path */
    bool b;
    int64_t i;
    const char *s;
    sp_ints ints;
    sp_sharding *sharding;
    struct { int n; sp_sharding **v; } shardings;
    struct { int n; sp_axis_ref *v; } axes;
    sp_rule *rule;
    sp_mesh *mesh;
    /* Closed dims without priority; printed [{"x"}, {}]. */
    struct { int n; sp_dim_sharding *v; } dim_axes;
    struct { int n; sp_all_to_all_param *v; } all_to_all;
  } u;
} sp_attr;

/* A dictionary of attributes, in insertion order (printers sort by name). */
typedef struct sp_attrs {
  int n, cap;
  sp_attr *v;
} sp_attrs;

sp_attr *sp_attrs_get(const sp_attrs *d, const char *name);       /* NULL if absent */
/* Adds or replaces; the attr struct is copied (its pointers are not). SP_ENOMEM on failure. */
int sp_attrs_set(sp_arena *a, sp_attrs *d, const sp_attr *attr);
bool sp_attrs_remove(sp_attrs *d, const char *name);

/* ------------------------------------------------------------------ values and uses */

typedef struct sp_op sp_op;
typedef struct sp_block sp_block;
typedef struct sp_region sp_region;
typedef struct sp_value sp_value;

typedef struct sp_use {
  sp_value *value;        /* the value used (NULL while unset) */
  sp_op *owner;           /* the op that uses it */
  int index;              /* operand number in owner */
  struct sp_use *next;    /* next use of the same value */
  struct sp_use **pprev;  /* the pointer that points at this use */
} sp_use;

struct sp_value {
  sp_type *type;
  sp_op *def;             /* defining op, or NULL for a block argument */
  sp_block *block;        /* for a block argument: its block */
  int index;              /* result number, or argument number */
  const char *name_hint;  /* name from the input without '%' (printers may rename); may be NULL */
  sp_sharding *sharding;  /* NULL = no sharding */
  sp_attrs attrs;         /* block arguments: other argument attributes, verbatim */
  sp_loc loc;
  sp_use *uses;           /* newest first */
};

bool sp_value_has_uses(const sp_value *v);
/* No result of `op` has a use (true for an op without results). */
bool sp_op_results_unused(const sp_op *op);
int sp_value_num_uses(const sp_value *v);
/* Makes every use of `from` use `to`. */
void sp_value_replace_all_uses(sp_value *from, sp_value *to);

/* ------------------------------------------------------------------ ops, blocks, regions */

struct sp_region {
  sp_op *parent;
  int nblocks, capblocks;
  sp_block **blocks;
};

struct sp_block {
  sp_region *parent;
  int nargs, capargs;
  sp_value **args;
  sp_op *first, *last;
};

/* func.func signature and result attributes (args are the entry block's arguments). */
typedef struct sp_func_info {
  int nargs;
  sp_type **arg_types;          /* also the entry block's arg types when there is a body */
  int nresults;
  sp_type **result_types;
  sp_sharding **result_shardings; /* per result, NULL = none */
  sp_attrs *result_attrs;       /* per result: other attributes, verbatim */
  sp_attrs *decl_arg_attrs;     /* declarations without a body: per-arg attributes */
} sp_func_info;

struct sp_op {
  sp_op_kind kind;
  int pass_index;               /* free for the running pass (0 when created): propagation
                                   sessions keep each op's number here */
  const char *name;             /* full name, always set ("stablehlo.add", "mhlo.foo") */
  int noperands;
  sp_use *operands;             /* array of noperands uses */
  int nresults;
  sp_value *results;            /* array of nresults values */
  int nregions;
  sp_region *regions;           /* array of nregions regions */
  sp_attrs attrs;
  sp_func_info *func;           /* func.func only */
  sp_block *block;              /* containing block, NULL while detached */
  sp_op *prev, *next;           /* siblings in the block */
  sp_loc loc;
};

/* Creates a detached op of the given name with `noperands` operands (values may be NULL and
 * set later with sp_op_set_operand), `nresults` results of the given types, and `nregions`
 * empty regions. Returns NULL on out-of-memory. */
sp_op *sp_op_create(sp_arena *a, const char *name, int noperands, sp_value *const *operands,
                    int nresults, sp_type *const *result_types, int nregions);
/* sp_op_create for a caller that already knows the kind of `name` (the reader looks it up
 * once per op name, not once per op); `kind` must be sp_op_kind_from_name(name). */
sp_op *sp_op_create_of_kind(sp_arena *a, const char *name, sp_op_kind kind, int noperands,
                            sp_value *const *operands, int nresults, sp_type *const *result_types,
                            int nregions);
void sp_op_set_operand(sp_op *op, int i, sp_value *v);
/* Attaches a detached op. */
void sp_block_append(sp_block *b, sp_op *op);
void sp_op_insert_before(sp_op *anchor, sp_op *op);
void sp_op_insert_after(sp_op *anchor, sp_op *op);
/* Right after the op defining `v`, or at the start of its block for a block argument. */
void sp_op_insert_after_value(sp_value *v, sp_op *op);
/* Detaches from its block (operands stay in use). */
void sp_op_unlink(sp_op *op);
/* Detaches and drops every operand use of the op and of the ops nested in it. The results
 * must have no uses left. */
void sp_op_erase(sp_op *op);
/* Puts the detached `op` where `old` is and erases `old`: result i of `op` takes the sharding,
 * location and name hint of result i of `old`, and all its uses. Both have as many results. */
void sp_op_replace(sp_op *old, sp_op *op);

sp_block *sp_region_add_block(sp_arena *a, sp_region *r);
sp_value *sp_block_add_arg(sp_arena *a, sp_block *b, sp_type *type);
/* The op whose region holds this block (NULL at the top). */
sp_op *sp_block_parent_op(const sp_block *b);
/* The op that contains `op` (NULL for a detached or top-level op). */
sp_op *sp_op_parent(const sp_op *op);

/* Attribute helpers on ops. */
sp_attr *sp_op_attr(const sp_op *op, const char *name);
bool sp_op_get_int(const sp_op *op, const char *name, int64_t *out);
bool sp_op_get_ints(const sp_op *op, const char *name, sp_ints *out);
const char *sp_op_get_str(const sp_op *op, const char *name);   /* STR/SYMBOL/ENUM/TEXT */
/* An integer `key` in a custom call's backend config (mhlo.backend_config, else
 * backend_config), written as an MLIR dictionary (`key = 1 : i64`) or as JSON (`"key": 1`,
 * possibly still escaped as \22key\22). False when absent or malformed. */
bool sp_op_backend_config_int(const sp_op *op, const char *key, int64_t *out);
sp_rule *sp_op_rule(const sp_op *op);                           /* "sdy.sharding_rule" */
/* Moves shardings written as attributes onto the op's results, as every front-end (MLIR text,
 * structured graph) reads them: the inline `sharding` of sdy.sharding_constraint / reshard /
 * data_flow_edge, the `out_sharding` of the sdy collectives, the `out_shardings` of manual and
 * named computations, and an op's `sdy.sharding` list. SP_EINVAL, with *nlisted set to the
 * list's length, when a list does not have one sharding per result (it is then left in
 * place). */
int sp_op_absorb_result_shardings(sp_op *op, int *nlisted);

/* Pre-order walk: `fn` sees an op before the ops nested in its regions. Returning false from
 * `fn` stops the walk; the function returns false if it was stopped. */
typedef bool (*sp_walk_fn)(sp_op *op, void *ctx);
bool sp_op_walk(sp_op *op, sp_walk_fn fn, void *ctx);

/* ------------------------------------------------------------------ modules */

typedef struct sp_module {
  sp_arena *arena;          /* owns the module and everything in it */
  sp_op *op;                /* the builtin.module op: one region, one block */
  const char *filename;     /* for messages; "<input>" if unknown */
  /* Listeners a tool may attach (both NULL by default; neither is owned by the module):
   * where passes report warnings and remarks (ir/diag.h), and where propagation records the
   * conflicts it meets (propagation/conflict.h) when its options name no log of their own. */
  struct sp_diag_list *diags;
  struct sp_conflict_log *conflicts;
  /* The request's deadline, cancel flag and progress callback (ir/run_ctl.h), read by
   * propagation and the search; NULL = run to completion, report nothing. Not owned. */
  const struct sp_run_ctl *ctl;
  /* Which rule-registry warnings were already given (rules/registry.h: Shardy gives each
   * kind once per process). A tool planning several modules shares one across them;
   * NULL = each pass run starts afresh. Not owned. */
  struct sp_rules_diag *warned;
  /* What propagation did, kept when a pass runs with Shardy's debugging options
   * (propagation/trace.h); NULL until then. Owned: freed by `trace_free` with the module. */
  struct sp_trace *trace;
  void (*trace_free)(struct sp_trace *);
} sp_module;

/* A new empty module with its own arena (NULL on out-of-memory). */
sp_module *sp_module_new(const char *filename);
void sp_module_free(sp_module *m);
sp_block *sp_module_body(const sp_module *m);
/* The sdy.mesh op named `name` (without '@'), or NULL. */
sp_op *sp_module_lookup_mesh_op(const sp_module *m, const char *name);
const sp_mesh *sp_module_lookup_mesh(const sp_module *m, const char *name);
/* The mesh a sharding refers to (its inline mesh, or the named one), or NULL. */
const sp_mesh *sp_module_sharding_mesh(const sp_module *m, const sp_sharding *s);
/* The main function, by Shardy's rule: the module's only func.func, else the one named @main;
 * NULL when there is neither. Every stage finds it with this. */
sp_op *sp_module_main_func(const sp_module *m);
/* The func.func named `name`, or NULL. */
sp_op *sp_module_lookup_func(const sp_module *m, const char *name);
/* Number of ops in the module, nested ones included (not the module op itself). */
int64_t sp_module_num_ops(const sp_module *m);

#endif /* SP_IR_H */
