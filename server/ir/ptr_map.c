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

static void place(sp_ptr_map_slot *slots, size_t cap, const void *key, intptr_t val) {
  size_t mask = cap - 1, h = sp_ptr_hash(key) & mask;
  while (slots[h].key) h = (h + 1) & mask;
  slots[h].key = key;
  slots[h].val = val;
}

int sp_ptr_map_reserve(sp_ptr_map *m, size_t n) {
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

sp_ptr_map_slot *sp_ptr_map_slot_of(sp_ptr_map *m, const void *key, intptr_t dflt, bool *inserted) {
  assert(key != NULL);
  if (2 * (m->n + 1) + 1 > m->cap && sp_ptr_map_reserve(m, m->n + 1)) return NULL;
  size_t mask = m->cap - 1, h = sp_ptr_hash(key) & mask;
  while (m->slots[h].key && m->slots[h].key != key) h = (h + 1) & mask;
  bool fresh = !m->slots[h].key;
  if (fresh) {
    m->slots[h].key = key;
    m->slots[h].val = dflt;
    m->n++;
  }
  if (inserted) *inserted = fresh;
  return &m->slots[h];
}

int sp_ptr_map_put(sp_ptr_map *m, const void *key, intptr_t val) {
  sp_ptr_map_slot *s = sp_ptr_map_slot_of(m, key, val, NULL);
  if (!s) return SP_ENOMEM;
  s->val = val;
  return SP_OK;
}
