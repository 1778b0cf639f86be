/*
 * verify_int.h - the verifier state and helpers shared by verify.c (messages, meshes,
 * shardings, rules, the walk) and verify_manual.c (manual computations). Internal to server/ir.
 *
 * Every check returns SP_OK or a negative sp_status with the message in v->err (see verify.h
 * for its shape); verification stops at the first problem. The verifier's tables and scratch
 * are malloc'd and freed by verify.c when the pass ends.
 */
#ifndef SP_VERIFY_INT_H
#define SP_VERIFY_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"


/* Names the holder of a sharding in a message: "'func.func' op arg 0 - ". */
typedef struct where {
  const char *op;    /* op name, or NULL */
  const char *role;  /* "arg", "result", "operand", ... or NULL */
  int index;         /* with role; -1 for none */
  const char *sym;   /* symbol the op defines (meshes), or NULL */
  bool bare;         /* the op has one such value: "result - ", no index (as Shardy) */
  const char *lead;  /* printed first instead of the op ("custom op 'sdy.mesh' "), or NULL */
} where;

typedef struct mesh_slot {
  const char *name;  /* NULL = free */
  const sp_mesh *mesh;
} mesh_slot;

/* One axis reference of the sharding being checked, with what sorting needs. */
typedef struct ref_slot {
  sp_axis_ref ref;
  int axis;          /* index in the mesh */
  int64_t n;         /* size of that mesh axis */
  int64_t pre, next;
} ref_slot;

typedef struct verifier {
  const sp_module *m;
  const char *file;
  sp_err *err;
  mesh_slot *meshes;     /* open addressing, `mesh_cap` a power of two (0 = no table) */
  size_t mesh_cap;
  const sp_mesh *last_inline; /* the inline mesh verified last (shared meshes are common) */
  const char **manual;   /* axis names bound by enclosing manual computations */
  sp_loc *manual_locs;   /* the computation binding each */
  int nmanual, capmanual;
  ref_slot *refs;        /* scratch for one sharding */
  int caprefs;
} verifier;


int sp__verify_fail(verifier *v, sp_loc loc, const where *w, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int sp__verify_fail_code(verifier *v, int code, sp_loc loc, const where *w, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* A note attached to the error being reported (MLIR's attachNote). */
void sp__verify_note(const verifier *v, sp_loc loc, const char *msg);
/* "x" or "x":(2)4 into buf. */
const char *sp__verify_ref_text(const sp_axis_ref *r, char *buf, size_t cap);
sp_loc sp__verify_value_loc(const sp_value *val, sp_loc fallback);
const sp_type *sp__verify_value_type(const sp_value *val);
const sp_mesh *sp__verify_lookup_mesh(const verifier *v, const char *name);
bool sp__verify_is_manual_bound(const verifier *v, const char *name);
/* Shardy's error for an axis an enclosing manual computation binds, with its note there. */
int sp__verify_fail_manual_bound(verifier *v, sp_loc loc, const where *w, const char *name);
int sp__verify_check_sharding(verifier *v, const sp_sharding *s, const sp_type *t, sp_loc loc,
                              const where *w);
int sp__verify_regions(verifier *v, const sp_op *op);

/* verify_manual.c */
/* in_shardings of manual and named computations: one per operand, each fits its operand. */
int sp__verify_check_in_shardings(verifier *v, const sp_op *op, sp_sharding *const **in_out);
int sp__verify_manual_computation(verifier *v, const sp_op *op);

#endif /* SP_VERIFY_INT_H */
