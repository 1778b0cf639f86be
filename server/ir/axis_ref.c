/*
 * axis_ref.c - the algebra of axis references and sub-axes (see axis_ref.h).
 *
 * Everything is computed on the interval [pre, next) of the "pre-size" line of one axis: a
 * reference covers the factor range from pre to next = pre*size, and two references relate as
 * those ranges (and their divisibility) do.
 */
#include "ir/axis_ref.h"

#include <assert.h>
#include <string.h>

static int64_t pre_of(const sp_axis_ref *r) { return sp_axis_pre(r); }
static int64_t next_of(const sp_axis_ref *r, int64_t n) { return sp_axis_next(r, n); }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

sp_axis_ref sp_axis_make(const char *name, int64_t pre, int64_t size, int64_t n) {
  sp_axis_ref r = {name, pre, size};
  if (pre == 1 && size == n) r.pre = r.size = 0;
  return r;
}

bool sp_axis_is_valid(const sp_axis_ref *r, int64_t n) {
  if (!sp_axis_is_sub(r)) return true;
  if (r->pre < 1 || r->size <= 1 || r->size == n) return false;
  if (r->pre > n / r->size) return false; /* pre*size would exceed n */
  return n % (r->pre * r->size) == 0;
}

bool sp_axis_same_name(const sp_axis_ref *a, const sp_axis_ref *b) {
  return strcmp(a->name, b->name) == 0;
}

bool sp_axis_contains(const sp_axis_ref *a, const sp_axis_ref *b, int64_t n) {
  if (!sp_axis_same_name(a, b)) return false;
  if (!sp_axis_is_sub(a)) return true;
  return pre_of(a) <= pre_of(b) && next_of(a, n) >= next_of(b, n);
}

bool sp_axis_is_prefix_of(const sp_axis_ref *a, const sp_axis_ref *b, int64_t n) {
  return sp_axis_contains(b, a, n) && pre_of(a) == pre_of(b);
}

bool sp_axis_is_strict_prefix_of(const sp_axis_ref *a, const sp_axis_ref *b, int64_t n) {
  return sp_axis_is_prefix_of(a, b, n) && next_of(a, n) != next_of(b, n);
}

bool sp_axis_is_suffix_of(const sp_axis_ref *a, const sp_axis_ref *b, int64_t n) {
  return sp_axis_contains(b, a, n) && next_of(a, n) == next_of(b, n);
}

bool sp_axis_overlaps(const sp_axis_ref *a, const sp_axis_ref *b, int64_t n) {
  if (!sp_axis_same_name(a, b)) return false;
  if (!sp_axis_is_sub(a) || !sp_axis_is_sub(b)) return true;
  return pre_of(a) < next_of(b, n) && pre_of(b) < next_of(a, n);
}

bool sp_axis_can_coexist(const sp_axis_ref *a, const sp_axis_ref *b, int64_t n) {
  if (!sp_axis_same_name(a, b)) return true;
  if (!sp_axis_is_sub(a) || !sp_axis_is_sub(b)) return true;
  int64_t lo = min64(pre_of(a), pre_of(b)), hi = max64(pre_of(a), pre_of(b));
  int64_t lo_next = min64(next_of(a, n), next_of(b, n));
  int64_t hi_next = max64(next_of(a, n), next_of(b, n));
  if (lo_next > hi) /* overlapping: all four boundaries must nest */
    return lo_next % hi == 0 && hi % lo == 0 && hi_next % lo_next == 0;
  return hi % lo_next == 0;
}

bool sp_axis_overlap_part(const sp_axis_ref *a, const sp_axis_ref *b, int64_t n,
                          sp_axis_ref *out) {
  if (!sp_axis_overlaps(a, b, n) || !sp_axis_can_coexist(a, b, n)) return false;
  int64_t hi = max64(pre_of(a), pre_of(b));
  int64_t lo_next = min64(next_of(a, n), next_of(b, n));
  *out = sp_axis_make(a->name, hi, lo_next / hi, n);
  return true;
}

bool sp_axis_prefix_without_overlap(const sp_axis_ref *a, const sp_axis_ref *b, int64_t n,
                                    sp_axis_ref *out) {
  if (!sp_axis_can_coexist(a, b, n)) return false;
  if (!sp_axis_overlaps(a, b, n)) {
    *out = *a;
    return true;
  }
  if (pre_of(a) >= pre_of(b)) return false;
  *out = sp_axis_make(a->name, pre_of(a), pre_of(b) / pre_of(a), n);
  return true;
}

bool sp_axis_suffix_without_overlap(const sp_axis_ref *a, const sp_axis_ref *b, int64_t n,
                                    sp_axis_ref *out) {
  if (!sp_axis_can_coexist(a, b, n)) return false;
  if (!sp_axis_overlaps(a, b, n)) {
    *out = *a;
    return true;
  }
  if (next_of(a, n) <= next_of(b, n)) return false;
  *out = sp_axis_make(a->name, next_of(b, n), next_of(a, n) / next_of(b, n), n);
  return true;
}

bool sp_axis_greatest_common_prefix(const sp_axis_ref *a, const sp_axis_ref *b, int64_t n,
                                    sp_axis_ref *out) {
  if (!sp_axis_can_coexist(a, b, n)) return false;
  if (sp_axis_is_prefix_of(a, b, n)) { *out = *a; return true; }
  if (sp_axis_is_prefix_of(b, a, n)) { *out = *b; return true; }
  return false;
}

bool sp_axis_can_merge(const sp_axis_ref *a, const sp_axis_ref *b) {
  return sp_axis_is_sub(a) && sp_axis_is_sub(b) && sp_axis_same_name(a, b) &&
         a->pre * a->size == b->pre;
}

sp_axis_ref sp_axis_merge(const sp_axis_ref *a, const sp_axis_ref *b, int64_t n) {
  assert(sp_axis_can_merge(a, b));
  return sp_axis_make(a->name, a->pre, a->size * b->size, n);
}

int sp_axis_compare(const sp_axis_ref *a, const sp_axis_ref *b, const sp_mesh *mesh) {
  int ia = mesh ? sp_mesh_axis_index(mesh, a->name) : -1;
  int ib = mesh ? sp_mesh_axis_index(mesh, b->name) : -1;
  if (ia < 0 || ib < 0) {
    if (ia >= 0) return -1;
    if (ib >= 0) return 1;
    int c = strcmp(a->name, b->name);
    if (c) return c;
  } else if (ia != ib) {
    return ia < ib ? -1 : 1;
  }
  bool sa = sp_axis_is_sub(a), sb = sp_axis_is_sub(b);
  if (!sa && !sb) return 0;
  if (!sa) return b->pre > 1 ? -1 : 1;  /* "x" < "x":(2)2, but "x":(1)4 < "x" */
  if (!sb) return a->pre > 1 ? 1 : -1;
  if (a->pre != b->pre) return a->pre < b->pre ? -1 : 1;
  if (a->size != b->size) return a->size < b->size ? -1 : 1;
  return 0;
}
