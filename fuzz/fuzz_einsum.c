/*
 * fuzz_einsum.c - libFuzzer target: the einsum-like rule strings of JAX custom_partitioning
 * (rules/einsum.h).
 *
 * Input: a first line giving the tensors' shapes, operands then results, "8x4;4x2|8x2" ("-"
 * is a scalar), then the rule text. The shape line is read leniently (at most 8 tensors of
 * rank 8; a number that does not fit is clamped), so every input tests the rule parser.
 *
 * Invariants beyond "no crash": a rejected rule has an error message; an accepted one has
 * one mapping per tensor with the tensor's rank, factor indices in range, non-negative factor
 * sizes (zero only for a zero-sized dim), and each dim's factor sizes multiply to the dim's
 * size.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "ir/arena.h"
#include "rules/einsum.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_TENSORS 8
#define MAX_DIMS 8

/* Reads "AxBxC" up to a separator; returns the position after the tensor. */
static const char *read_shape(const char *p, const char *end, int64_t *dims, int *rank) {
  *rank = 0;
  if (p < end && *p == '-') p++;
  while (p < end && *p >= '0' && *p <= '9') {
    int64_t v = 0;
    while (p < end && *p >= '0' && *p <= '9') {
      v = v > (INT64_MAX - 9) / 10 ? INT64_MAX : v * 10 + (*p - '0');
      p++;
    }
    if (*rank < MAX_DIMS) dims[(*rank)++] = v;
    if (p < end && *p == 'x') p++;
  }
  return p;
}

static void check_mapping(const sp_rule *r, const sp_rule_tensor *t, const sp_type *type) {
  sp_fuzz_check(t->rank == type->rank, "rule tensor rank differs from its type", NULL);
  for (int d = 0; d < t->rank; d++) {
    const sp_rule_dim *dim = &t->dims[d];
    int64_t prod = 1;
    int overflow = 0;
    for (int k = 0; k < dim->nfactors; k++) {
      int f = dim->factors[k];
      sp_fuzz_check(f >= 0 && f < r->nfactors, "factor index out of range", NULL);
      int64_t s = r->factors[f].size;
      sp_fuzz_check(s >= 0, "negative factor size", NULL);  /* 0 for a zero-sized dim */
      if (s > 0 && prod > INT64_MAX / s) overflow = 1;
      else prod *= s;
    }
    if (dim->nfactors > 0 && !overflow)
      sp_fuzz_check(prod == type->dims[d], "factor sizes do not multiply to the dim size", NULL);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *p = (const char *)data, *end = p + size;
  const char *nl = memchr(p, '\n', size);
  if (!nl) return 0;
  sp_arena *a = sp_arena_new(0);
  sp_fuzz_check(a != NULL, "arena", NULL);
  sp_type *types[2][MAX_TENSORS];
  int ntypes[2] = {0, 0}, side = 0;
  while (p < nl) {
    int64_t dims[MAX_DIMS];
    int rank;
    p = read_shape(p, nl, dims, &rank);
    if (ntypes[side] < MAX_TENSORS) types[side][ntypes[side]++] = sp_type_tensor(a, rank, dims, "f32");
    if (p < nl && *p == '|') side = 1;
    if (p < nl) p++;
  }
  size_t len = (size_t)(end - (nl + 1));
  char *text = malloc(len + 1);
  sp_fuzz_check(text != NULL, "malloc", NULL);
  memcpy(text, nl + 1, len);
  text[len] = '\0';
  sp_rule *r = NULL;
  sp_err err;
  int rc = sp_einsum_rule(a, text, NULL, ntypes[0], types[0], ntypes[1], types[1], &r, &err);
  if (rc != SP_OK) {
    sp_fuzz_check_error(rc, &err, "einsum failed without an error");
  } else {
    sp_fuzz_check(r != NULL && r->noperands == ntypes[0] && r->nresults == ntypes[1],
                  "rule tensor counts", NULL);
    for (int i = 0; i < r->noperands; i++) check_mapping(r, &r->operands[i], types[0][i]);
    for (int i = 0; i < r->nresults; i++) check_mapping(r, &r->results[i], types[1][i]);
    sp_strbuf sb = SP_STRBUF_INIT;
    sp_rule_print(&sb, r);
    sp_fuzz_check(sb.len > 0 && !sb.oom, "rule prints", NULL);
    sp_strbuf_free(&sb);
  }
  free(text);
  sp_arena_free(a);
  return 0;
}
