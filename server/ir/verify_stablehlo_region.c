/*
 * verify_stablehlo_region.c - StableHLO's verifier checks of the ops with regions whose types
 * tie to the op's (see verify_stablehlo_int.h), worded as StableHLO words them where its
 * words are known:
 *
 *   sort     N >= 1 operands of one shape, N results of the operands' types, dimension in
 *            [-rank, rank), a comparator of 2N scalar arguments
 *   while    condition and body take the operands' types; the condition returns one
 *            tensor<i1>; the body returns the operands' types; the results have them too
 *   if/case  a tensor<i1> predicate (if) or tensor<i32> index (case); branches without
 *            arguments, each returning the op's result types
 * A region's terminator must be stablehlo.return. Types are compared where they are known
 * (a '?' dim agrees with any size).
 *
 * Memory: nothing is allocated.
 */
#include <stdio.h>
#include <string.h>

#include "ir/verify_stablehlo_int.h"

/* "tensor<4xf32>, tensor<i1>" for a list of types (cut to `cap`). */
static void types_text(sp_type *const *types, int n, char *buf, size_t cap) {
  size_t k = 0;
  buf[0] = '\0';
  for (int i = 0; i < n && k + 1 < cap; i++) {
    char one[128];
    sp__vs_text(types[i], one, sizeof one);
    k += (size_t)snprintf(buf + k, cap - k, "%s%s", i ? ", " : "", one);
  }
}

static bool same_types(sp_type *const *a, int na, sp_type *const *b, int nb) {
  if (na != nb) return false;
  for (int i = 0; i < na; i++)
    if (!sp__vs_compatible(a[i], b[i])) return false;
  return true;
}

/* Up to 64 types gathered from operands, results, block arguments or a
 * terminator's operands; `n` is how many. */
typedef struct type_list {
  int n;
  sp_type *v[64];
  bool cut;          /* more than fit: compared by count only */
} type_list;

static void push(type_list *l, sp_type *t) {
  if (l->n == 64)
    l->cut = true;
  else
    l->v[l->n++] = t;
}

static void of_operands(const sp_op *op, int from, type_list *l) {
  *l = (type_list){0};
  for (int i = from; i < op->noperands; i++) push(l, op->operands[i].value->type);
}

static void of_results(const sp_op *op, type_list *l) {
  *l = (type_list){0};
  for (int i = 0; i < op->nresults; i++) push(l, op->results[i].type);
}

static void of_args(const sp_block *b, type_list *l) {
  *l = (type_list){0};
  for (int i = 0; i < b->nargs; i++) push(l, b->args[i]->type);
}

static bool lists_agree(const type_list *a, int na, const type_list *b, int nb) {
  if (na != nb) return false;
  if (a->cut || b->cut) return true;
  return same_types(a->v, a->n, b->v, b->n);
}

/* Region `r` of `op` as a single block; NULL (and an error) otherwise. */
static const sp_block *single_block(const sp_module *m, const sp_op *op, int r, int *rc,
                                    sp_err *err) {
  if (r >= op->nregions || op->regions[r].nblocks != 1) {
    *rc = sp__verify_op_fail(m, op, err, "expects region #%d to have exactly one block", r);
    return NULL;
  }
  return op->regions[r].blocks[0];
}

/* The block's terminator, a stablehlo.return; NULL (and an error) otherwise. */
static const sp_op *block_return(const sp_module *m, const sp_op *op, const sp_block *b, int *rc,
                                 sp_err *err) {
  const sp_op *t = b->last;
  if (!t || t->kind != SP_OP_RETURN) {
    *rc = sp__verify_op_fail(m, op, err, "expects regions to end with 'stablehlo.return', found "
                             "'%s'", t ? t->name : "nothing");
    return NULL;
  }
  return t;
}

static int list_mismatch(const sp_module *m, const sp_op *op, const char *fmt, const type_list *a,
                         const type_list *b, sp_err *err) {
  char ta[512], tb[512];
  types_text(a->v, a->n, ta, sizeof ta);
  types_text(b->v, b->n, tb, sizeof tb);
  return sp__verify_op_fail(m, op, err, fmt, ta, tb);
}

int sp__verify_sort(const sp_module *m, const sp_op *op, sp_err *err) {
  if (op->noperands < 1) return sp__verify_op_fail(m, op, err, "expected at least 1 operand");
  type_list in, out;
  of_operands(op, 0, &in);
  of_results(op, &out);
  if (!lists_agree(&in, op->noperands, &out, op->nresults))
    return list_mismatch(m, op, "requires the same type for all operands and results: operands "
                         "(%s), results (%s)", &in, &out, err);
  const sp_type *t = sp__vs_operand(op, 0);
  for (int i = 1; i < op->noperands; i++) {
    const sp_type *u = sp__vs_operand(op, i);
    bool same = sp__vs_static(t) && sp__vs_static(u) ? t->rank == u->rank : true;
    for (int d = 0; same && sp__vs_static(t) && sp__vs_static(u) && d < t->rank; d++)
      same = t->dims[d] == u->dims[d];
    if (!same) return sp__verify_op_fail(m, op, err, "requires the same shape for all operands");
  }
  int64_t dim = -1;
  sp_op_get_int(op, "dimension", &dim);
  if (sp__vs_static(t) && (dim < -t->rank || dim >= t->rank))
    return sp__verify_op_fail(m, op, err, "dimension attribute value must be in range [-%d, %d), "
                              "but found %lld", t->rank, t->rank, (long long)dim);
  int rc = SP_OK;
  const sp_block *cmp = single_block(m, op, 0, &rc, err);
  if (!cmp) return rc;
  if (cmp->nargs != 2 * op->noperands)
    return sp__verify_op_fail(m, op, err, "comparator block should have %d arguments",
                              2 * op->noperands);
  for (int i = 0; i < cmp->nargs; i++) {
    const sp_type *a = cmp->args[i]->type;
    if (a && a->kind == SP_TYPE_TENSOR && a->rank > 0)
      return sp__verify_op_fail(m, op, err, "comparator block argument #%d should be of type "
                                "0-rank tensor, not of rank %d", i, a->rank);
  }
  const sp_op *ret = block_return(m, op, cmp, &rc, err);
  if (!ret) return rc;
  if (ret->noperands != 1)
    return sp__verify_op_fail(m, op, err, "comparator must return single output but got %d",
                              ret->noperands);
  return SP_OK;
}

int sp__verify_while(const sp_module *m, const sp_op *op, sp_err *err) {
  int rc = SP_OK;
  const sp_block *cond = single_block(m, op, 0, &rc, err);
  if (!cond) return rc;
  const sp_block *body = single_block(m, op, 1, &rc, err);
  if (!body) return rc;
  type_list ops, res, cargs, bargs, bret;
  of_operands(op, 0, &ops);
  of_results(op, &res);
  of_args(cond, &cargs);
  of_args(body, &bargs);
  if (!lists_agree(&ops, op->noperands, &cargs, cond->nargs))
    return list_mismatch(m, op, "expect operands to be compatible with condition block arguments "
                         "but got %s vs %s", &ops, &cargs, err);
  if (!lists_agree(&ops, op->noperands, &bargs, body->nargs))
    return list_mismatch(m, op, "expect operands to be compatible with body block arguments but "
                         "got %s vs %s", &ops, &bargs, err);
  if (!lists_agree(&ops, op->noperands, &res, op->nresults))
    return list_mismatch(m, op, "expect operands to be compatible with result types but got %s vs "
                         "%s", &ops, &res, err);
  const sp_op *cret = block_return(m, op, cond, &rc, err);
  if (!cret) return rc;
  if (cret->noperands != 1)
    return sp__verify_op_fail(m, op, err, "expect condition body returns a single value but got %d",
                              cret->noperands);
  const sp_type *p = sp__vs_operand(cret, 0);
  if (p && p->kind == SP_TYPE_TENSOR && (p->rank != 0 || !p->elem || strcmp(p->elem, "i1") != 0)) {
    char text[128];
    sp__vs_text(p, text, sizeof text);
    return sp__verify_op_fail(m, op, err, "expect condition block return a zero-ranked tensor of "
                              "i1 but got %s", text);
  }
  const sp_op *bterm = block_return(m, op, body, &rc, err);
  if (!bterm) return rc;
  of_operands(bterm, 0, &bret);
  if (!lists_agree(&ops, op->noperands, &bret, bterm->noperands))
    return list_mismatch(m, op, "expect operands to be compatible with body block return types but "
                         "got %s vs %s", &ops, &bret, err);
  return SP_OK;
}

int sp__verify_if_case(const sp_module *m, const sp_op *op, sp_err *err) {
  bool is_if = op->kind == SP_OP_IF;
  if (op->noperands != 1)
    return sp__verify_op_fail(m, op, err, "expected 1 operand, but found %d", op->noperands);
  const sp_type *p = sp__vs_operand(op, 0);
  const char *want = is_if ? "i1" : "i32";
  if (p && p->kind == SP_TYPE_TENSOR && (p->rank != 0 || !p->elem || strcmp(p->elem, want) != 0)) {
    char text[128];
    sp__vs_text(p, text, sizeof text);
    return sp__verify_op_fail(m, op, err, "operand #0 must be a 0-dimensional tensor of %s, but got "
                              "'%s'", want, text);
  }
  if (is_if && op->nregions != 2)
    return sp__verify_op_fail(m, op, err, "expected 2 regions, but found %d", op->nregions);
  if (!is_if && op->nregions < 1)
    return sp__verify_op_fail(m, op, err, "expect at least one branch");
  type_list res, ret;
  of_results(op, &res);
  for (int r = 0; r < op->nregions; r++) {
    int rc = SP_OK;
    const sp_block *b = single_block(m, op, r, &rc, err);
    if (!b) return rc;
    if (b->nargs != 0)
      return sp__verify_op_fail(m, op, err, "branch %d must have 0 arguments, but found %d", r,
                                b->nargs);
    const sp_op *t = block_return(m, op, b, &rc, err);
    if (!t) return rc;
    of_operands(t, 0, &ret);
    if (!lists_agree(&ret, t->noperands, &res, op->nresults)) {
      char fmt[128];
      snprintf(fmt, sizeof fmt, "branch %d returned types (%%s) do not match op result types (%%s)",
               r);
      return list_mismatch(m, op, fmt, &ret, &res, err);
    }
  }
  return SP_OK;
}
