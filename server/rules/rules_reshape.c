/*
 * rules_reshape.c - the reshape rule: compound factors found by a gcd walk.
 *
 * A reshape 8x4 -> 2x16 keeps the data order, so its dims decompose into common factors:
 * in [ij, k], out [i, jk] with i=2, j=4, k=4. The walk goes over both shapes at once, major
 * to minor, keeping the product of the dims entered so far on each side (Din, Dout) and of
 * the factors placed so far (Fin, Fout):
 *   - a side enters its next dim when its factors fill the dims entered (Fin == Din); a dim
 *     of size 1 gets a private size-1 factor instead (input side first);
 *   - with nin = Din/Fin and nout = Dout/Fout left in the current dims and g = gcd(nin, nout):
 *     if Fin == Fout, a factor g > 1 is shared by both current dims, or, when g == 1, each
 *     side gets its remainder as a factor of its own;
 *     if Fin < Fout the input side catches up with an input-only factor pick(nin, Fin, Fout),
 *     and symmetrically when Fout < Fin;
 *   - pick(n, small, large) = large/small when that is whole and divides n, else n/g when
 *     n > g, else n.
 * Examples (from Shardy's registry tests): 6x4 -> 4x6 gives ([ij, mn])->([ik, ln]) with
 * i=2, j=3, k=2, l=3, m=2, n=2; 3x2 -> 2x3 gives ([i, l])->([j, k]).
 *
 * Every step multiplies Fin or Fout by at least 2 or enters a dim, so the walk takes
 * O(rank + log2(elements)) steps. A reshape with zero elements gets no rule.
 */
#include "rules/op_rules.h"

#include "ir/int_math.h"

static int64_t pick(int64_t n, int64_t small, int64_t large, int64_t g) {
  if (large % small == 0 && n % (large / small) == 0) return large / small;
  return n > g ? n / g : n;
}

/* Product of a shape; -1 on overflow. */
static int64_t product(const int64_t *shape, int rank) {
  int64_t p = 1;
  for (int d = 0; d < rank; d++)
    if (__builtin_mul_overflow(p, shape[d], &p)) return -1;
  return p;
}

typedef struct side {
  int tensor;            /* builder tensor number */
  const int64_t *shape;
  int rank;
  int next;              /* next dim to enter */
  int cur;               /* dim being filled, -1 when exhausted */
  int64_t dims;          /* product of the dims entered (Din / Dout) */
  int64_t factors;       /* product of the factors placed (Fin / Fout) */
} side;

/* Enters the next dim of `s` if the current one is full, giving size-1 dims their own
 * factor on the way. */
static void enter(sp_rule_builder *b, side *s) {
  if (s->factors != s->dims) return;
  while (s->next < s->rank && s->shape[s->next] == 1)
    sp_rule_builder_map(b, s->tensor, s->next++,
                        sp_rule_builder_factor(b, 1, SP_FACTOR_PASS_THROUGH, false));
  if (s->next < s->rank) {
    s->cur = s->next++;
    s->dims *= s->shape[s->cur];
  } else {
    s->cur = -1;
  }
}

static void own_factor(sp_rule_builder *b, side *s, int64_t size) {
  sp_rule_builder_map(b, s->tensor, s->cur,
                      sp_rule_builder_factor(b, size, SP_FACTOR_PASS_THROUGH, false));
  s->factors *= size;
}

int sp_rules_build_reshape(sp_rule_builder *b, const sp_op *op, const sp_rules_options *opts,
                           sp_err *err) {
  int rc = sp_rules_check_arity(op, 1, 1, 1, 1, err);
  if (rc != SP_OK) return rc;
  side in = {0, sp_rules_operand_shape(op, 0), sp_rules_operand_rank(op, 0), 0, -1, 1, 1};
  side out = {sp_rules_res(b, 0), sp_rules_result_shape(op, 0), sp_rules_result_rank(op, 0),
              0, -1, 1, 1};
  int64_t pin = product(in.shape, in.rank), pout = product(out.shape, out.rank);
  if (pin < 0 || pout < 0)
    return sp_rules_op_err(err, op, SP_EINVAL, "element count overflows 64 bits");
  if (pin != pout)
    return sp_rules_op_err(err, op, SP_EINVAL, "operand has %lld elements but result has %lld",
                           (long long)pin, (long long)pout);
  if (pin == 0) return SP_RULES_NONE;
  for (;;) {
    enter(b, &in);
    enter(b, &out);
    if (in.cur < 0 && out.cur < 0) break;
    int64_t nin = in.dims / in.factors, nout = out.dims / out.factors;
    int64_t g = sp_gcd64(nin, nout);
    if (in.factors == out.factors) {
      if (in.cur < 0 || out.cur < 0) break; /* unreachable with equal products */
      if (g > 1) {
        int f = sp_rule_builder_factor(b, g, SP_FACTOR_PASS_THROUGH, false);
        sp_rule_builder_map(b, in.tensor, in.cur, f);
        sp_rule_builder_map(b, out.tensor, out.cur, f);
        in.factors *= g;
        out.factors *= g;
      } else {
        own_factor(b, &in, nin);
        own_factor(b, &out, nout);
      }
    } else if (in.factors < out.factors) {
      own_factor(b, &in, pick(nin, in.factors, out.factors, g));
    } else {
      own_factor(b, &out, pick(nout, out.factors, in.factors, g));
    }
    if (b->status != SP_OK) return SP_OK; /* the build reports the failure */
  }
  if (in.cur >= 0 || out.cur >= 0 || in.factors != pin || out.factors != pout)
    return sp_rules_op_err(err, op, SP_EINTERNAL, "reshape walk did not cover both shapes");
  return SP_OK;
}
