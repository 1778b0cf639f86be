/*
 * grow.c - growth of heap arrays (see grow.h).
 */
#include "ir/grow.h"

#include <assert.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#include "ir/err.h"

int sp_grow_z(void **arr, size_t *cap, size_t count, size_t elem) {
  /* An empty array has no storage; a non-empty one has some (grow.h). */
  assert(elem > 0 && (*cap == 0 || *arr != NULL));
  if (count < *cap) return SP_OK;
  size_t ncap = *cap ? *cap : 8;
  while (ncap <= count) {
    if (ncap > SIZE_MAX / 2) return SP_ENOMEM;
    ncap *= 2;
  }
  if (elem && ncap > SIZE_MAX / elem) return SP_ENOMEM;
  void *p = realloc(*arr, ncap * elem);
  if (!p) return SP_ENOMEM;
  *arr = p;
  *cap = ncap;
  return SP_OK;
}

int sp__grow_int(void **arr, int *cap, int count, size_t elem) {
  assert(count >= 0);
  if (count < *cap) return SP_OK;
  if (*cap < 0) return SP_ENOMEM;
  size_t c = (size_t)*cap;
  if (sp_grow_z(arr, &c, (size_t)count, elem)) return SP_ENOMEM;
  if (c > INT_MAX) c = INT_MAX;   /* the array holds INT_MAX elements at least; count fits */
  *cap = (int)c;
  return SP_OK;
}
