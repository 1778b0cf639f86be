/*
 * arena.c - region allocator (see arena.h).
 *
 * A singly linked list of blocks; allocation bumps a pointer in the newest block. Large
 * requests get a dedicated block linked behind the current one so the current block keeps
 * serving small requests.
 */
#include "ir/arena.h"

#include <assert.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/err.h"

#define SP_ARENA_ALIGN 16
#define SP_ARENA_DEFAULT_BLOCK (64 * 1024)

typedef struct block {
  struct block *next;
  size_t size; /* usable bytes in data[] */
  size_t used;
  _Alignas(SP_ARENA_ALIGN) unsigned char data[];
} block;

struct sp_arena {
  block *head; /* current block; its `next` chain holds older ones */
  size_t block_size;
  size_t total;
};

sp_arena *sp_arena_new(size_t block_size) {
  sp_arena *a = calloc(1, sizeof *a);
  if (!a) return NULL;
  a->block_size = block_size ? block_size : SP_ARENA_DEFAULT_BLOCK;
  return a;
}

void sp_arena_free(sp_arena *a) {
  if (!a) return;
  block *b = a->head;
  while (b) {
    block *next = b->next;
    free(b);
    b = next;
  }
  free(a);
}

static block *block_new(size_t size) {
  block *b = malloc(sizeof *b + size);
  if (!b) return NULL;
  b->next = NULL;
  b->size = size;
  b->used = 0;
  return b;
}

void *sp_arena_alloc(sp_arena *a, size_t n) {
  if (n == 0) n = 1;
  if (n > SIZE_MAX - SP_ARENA_ALIGN) return NULL;
  n = (n + SP_ARENA_ALIGN - 1) & ~(size_t)(SP_ARENA_ALIGN - 1);
  block *b = a->head;
  /* Every allocation is SP_ARENA_ALIGN-aligned (arena.h): blocks start aligned and `used`
   * only ever grows by multiples of the alignment. */
  assert(!b || (b->used % SP_ARENA_ALIGN == 0 && b->used <= b->size));
  if (b && b->size - b->used >= n) {
    void *p = b->data + b->used;
    b->used += n;
    return p;
  }
  if (n > a->block_size / 4) {
    /* Dedicated block, kept behind the current one. */
    block *big = block_new(n);
    if (!big) return NULL;
    big->used = n;
    a->total += n;
    if (b) {
      big->next = b->next;
      b->next = big;
    } else {
      a->head = big;
    }
    return big->data;
  }
  block *nb = block_new(a->block_size);
  if (!nb) return NULL;
  a->total += a->block_size;
  nb->next = b;
  a->head = nb;
  nb->used = n;
  return nb->data;
}

void *sp_arena_calloc(sp_arena *a, size_t count, size_t size) {
  if (size && count > SIZE_MAX / size) return NULL;
  void *p = sp_arena_alloc(a, count * size);
  if (p) memset(p, 0, count * size);
  return p;
}

void *sp_arena_realloc(sp_arena *a, void *old, size_t old_n, size_t new_n) {
  if (new_n <= old_n && old) return old;
  void *p = sp_arena_alloc(a, new_n);
  if (p && old && old_n) memcpy(p, old, old_n);
  return p;
}

int sp__arena_grow(sp_arena *a, void **arr, int *cap, int count, size_t elem, int first) {
  assert(*cap >= 0 && count >= *cap && first > 0 && (*cap == 0 || *arr != NULL));
  int ncap = *cap ? *cap : first;
  while (ncap <= count) {
    if (ncap > INT_MAX / 2) return SP_ENOMEM;
    ncap *= 2;
  }
  void *p = sp_arena_alloc(a, (size_t)ncap * elem);
  if (!p) return SP_ENOMEM;
  if (*cap) memcpy(p, *arr, (size_t)*cap * elem);   /* the old array stays where it was */
  *arr = p;
  *cap = ncap;
  return SP_OK;
}

char *sp_arena_strndup(sp_arena *a, const char *s, size_t n) {
  char *p = sp_arena_alloc(a, n + 1);
  if (!p) return NULL;
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

char *sp_arena_strdup(sp_arena *a, const char *s) {
  return sp_arena_strndup(a, s, strlen(s));
}

char *sp_arena_printf(sp_arena *a, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return NULL;
  char *p = sp_arena_alloc(a, (size_t)n + 1);
  if (!p) return NULL;
  va_start(ap, fmt);
  vsnprintf(p, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return p;
}

size_t sp_arena_bytes(const sp_arena *a) { return a->total; }
