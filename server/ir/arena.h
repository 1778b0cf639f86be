/*
 * arena.h - region allocator for per-request memory.
 *
 * Everything that belongs to one request (the parsed module, rules, factor tables, the plan)
 * is allocated from one arena and freed at once with sp_arena_free(). Nothing allocated from
 * an arena is freed individually. Allocations are 16-byte aligned; a request larger than the
 * block size gets a block of its own. Not thread-safe: one arena per request/thread.
 *
 * Allocation failure: sp_arena_alloc() returns NULL and the arena stays usable; callers turn
 * that into SP_ENOMEM.
 */
#ifndef SP_ARENA_H
#define SP_ARENA_H

#include <stddef.h>

typedef struct sp_arena sp_arena;

/* A new, empty arena (NULL if out of memory). `block_size` 0 picks the default (64 KiB). */
sp_arena *sp_arena_new(size_t block_size);
/* Frees every block of the arena and the arena itself. NULL is a no-op. */
void sp_arena_free(sp_arena *a);

void *sp_arena_alloc(sp_arena *a, size_t n);            /* uninitialised */
void *sp_arena_calloc(sp_arena *a, size_t count, size_t size); /* zeroed; overflow-checked */
/* Grows `old` (of `old_n` bytes, from this arena) to `new_n` bytes; copies. */
void *sp_arena_realloc(sp_arena *a, void *old, size_t old_n, size_t new_n);
/* Makes room in an arena-backed array of `*cap` elements of `elem` bytes for element index
 * `count`: when count >= *cap, the capacity doubles (from `first` when it is 0) until it is
 * past `count`, the *cap old elements are copied, and *arr and *cap are updated. The old array
 * is left where it was, so it may also be an inline or stack buffer of *cap elements. SP_OK, or
 * SP_ENOMEM (out of memory, or a capacity past INT_MAX) with *arr and *cap unchanged. The one
 * growth rule of arena-backed arrays (heap arrays: sp_grow in grow.h). */
static inline int sp_arena_grow_from(sp_arena *a, void **arr, int *cap, int count, size_t elem,
                                     int first);
/* sp_arena_grow_from with 8 as the first capacity. */
static inline int sp_arena_grow(sp_arena *a, void **arr, int *cap, int count, size_t elem) {
  return sp_arena_grow_from(a, arr, cap, count, elem, 8);
}
/* The growing part (count >= *cap); call sp_arena_grow_from instead. */
int sp__arena_grow(sp_arena *a, void **arr, int *cap, int count, size_t elem, int first);
/* The check for room is inline, so a push in a hot loop costs a compare. */
static inline int sp_arena_grow_from(sp_arena *a, void **arr, int *cap, int count, size_t elem,
                                     int first) {
  return count < *cap ? 0 : sp__arena_grow(a, arr, cap, count, elem, first);
}
char *sp_arena_strdup(sp_arena *a, const char *s);
char *sp_arena_strndup(sp_arena *a, const char *s, size_t n);
char *sp_arena_printf(sp_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Total bytes obtained from malloc by this arena (for memory benchmarks). */
size_t sp_arena_bytes(const sp_arena *a);

#endif /* SP_ARENA_H */
