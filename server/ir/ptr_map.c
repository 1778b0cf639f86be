/*
 * ptr_map.c - pointer-keyed open-addressing map (see ptr_map.h).
 */
#include "ir/ptr_map.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "ir/err.h"

void sp_ptr_map_init(sp_ptr_map *m) { memset(m, 0, sizeof *m); }

void sp_ptr_map_free(sp_ptr_map *m) {
  free(m->slots);
  memset(m, 0, sizeof *m);
}

void sp_ptr_map_clear(sp_ptr_map *m) {
  if (m->slots) memset(m->slots, 0, m->cap * sizeof *m->slots);
  m->n = 0;
}

static void place(sp_ptr_map_slot *slots, size_t cap, const void *key, intptr_t val) {
  size_t mask = cap - 1, h = sp_ptr_hash(key) & mask;
  while (slots[h].key) h = (h + 1) & mask;
  slots[h].key = key;
  slots[h].val = val;
}

int sp_ptr_map_reserve(sp_ptr_map *m, size_t n) {
  assert((m->cap & (m->cap - 1)) == 0 && (m->cap == 0 || 2 * m->n < m->cap));
  size_t cap = m->cap ? m->cap : 16;
  while (cap < 2 * n + 2) cap *= 2;
  if (cap == m->cap) return SP_OK;
  sp_ptr_map_slot *slots = calloc(cap, sizeof *slots);
  if (!slots) return SP_ENOMEM;
  for (size_t i = 0; i < m->cap; i++)
    if (m->slots[i].key) place(slots, cap, m->slots[i].key, m->slots[i].val);
  free(m->slots);
  m->slots = slots;
  m->cap = cap;
  return SP_OK;
}

int sp_ptr_map_put(sp_ptr_map *m, const void *key, intptr_t val) {
  assert(key != NULL);
  sp_ptr_map_slot *s = sp_ptr_map_slot_of(m, key, val, NULL);
  if (!s) return SP_ENOMEM;
  s->val = val;
  return SP_OK;
}
