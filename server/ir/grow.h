/*
 * grow.h - growth of heap arrays: the one doubling rule every malloc'd array of the project
 * grows by (arena-backed arrays use sp_arena_grow in arena.h, the same rule on an arena).
 *
 * sp_grow makes room for element index `count` in `*arr`, an array of `*cap` elements of `elem`
 * bytes: when count >= *cap the capacity doubles (to more than `count`; 8 at first), the array
 * is realloc'd and *arr and *cap are updated. On failure (out of memory or a capacity past the
 * type's range) it returns SP_ENOMEM and leaves *arr and *cap as they were, so the caller still
 * owns and frees the old array. New elements are uninitialised. Memory: *arr is malloc'd (NULL
 * with *cap 0 is an empty array); the caller frees it. Thread-safe (no shared state).
 *
 * Call it as `sp_grow((void **)&v, &cap, n, sizeof *v)` before writing v[n]. The check that
 * there is room already is inline, so a push in a hot loop costs a compare.
 */
#ifndef SP_GROW_H
#define SP_GROW_H

#include <stddef.h>

/* The growing part of sp_grow (count >= *cap); call sp_grow instead. */
int sp__grow_int(void **arr, int *cap, int count, size_t elem);
/* The same with a size_t capacity. SP_OK or SP_ENOMEM. */
int sp_grow_z(void **arr, size_t *cap, size_t count, size_t elem);

/* Capacity counted in an int. SP_OK (0) or SP_ENOMEM. */
static inline int sp_grow(void **arr, int *cap, int count, size_t elem) {
  return count < *cap ? 0 : sp__grow_int(arr, cap, count, elem);
}

#endif /* SP_GROW_H */
