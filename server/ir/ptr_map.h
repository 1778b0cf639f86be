/*
 * ptr_map.h - the engine's one map from pointers to integers (or pointers): open addressing
 * with linear probing, key and value side by side in one slot (a lookup touches one cache
 * line), capacity a power of two kept above twice the entries, so probes stay short.
 *
 * Keys are non-NULL pointers compared by address; values are intptr_t (an int, an index, or
 * a pointer cast to intptr_t). The map grows on insertion; reserve up front to avoid
 * rehashing. Entries are never removed one by one (clear empties the whole map), so probe
 * chains never break. Invariants (asserted in debug builds): cap is 0 or a power of two and
 * n < cap / 2. Memory: malloc'd, released by sp_ptr_map_free; a zeroed map is empty and
 * valid. Not synchronized: one map per thread (or per request). Every pointer-keyed table of
 * the engine is one of these (or, for the clone map, a typed wrapper over one).
 */
#ifndef SP_PTR_MAP_H
#define SP_PTR_MAP_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sp_ptr_map_slot {
  const void *key;   /* NULL = empty */
  intptr_t val;
} sp_ptr_map_slot;

typedef struct sp_ptr_map {
  size_t cap;        /* 0 or a power of two */
  size_t n;          /* entries */
  sp_ptr_map_slot *slots;
} sp_ptr_map;

/* The hash of a pointer (a 64-bit finalizer mix); shared by every pointer-keyed table. */
static inline size_t sp_ptr_hash(const void *p) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return (size_t)x;
}

void sp_ptr_map_init(sp_ptr_map *m);
void sp_ptr_map_free(sp_ptr_map *m);
/* Empties the map and keeps its capacity (a table reused per module or per pass). */
void sp_ptr_map_clear(sp_ptr_map *m);
/* Makes room for `n` entries in total without rehashing. SP_OK or SP_ENOMEM. */
int sp_ptr_map_reserve(sp_ptr_map *m, size_t n);
/* Inserts or overwrites key -> val. SP_OK or SP_ENOMEM. */
int sp_ptr_map_put(sp_ptr_map *m, const void *key, intptr_t val);

/* The slot of `key`, inserted with value `dflt` when absent (*inserted tells, may be NULL);
 * NULL on out-of-memory. The pointer is valid until the next insertion. Inline: the printer,
 * the hasher and the clone map call it once per value. */
static inline sp_ptr_map_slot *sp_ptr_map_slot_of(sp_ptr_map *m, const void *key, intptr_t dflt,
                                                  bool *inserted) {
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

/* The slot of `key`, or NULL when absent. Valid until the next insertion. */
static inline sp_ptr_map_slot *sp_ptr_map_find(const sp_ptr_map *m, const void *key) {
  if (!m->cap) return NULL;
  size_t mask = m->cap - 1, h = sp_ptr_hash(key) & mask;
  while (m->slots[h].key) {
    if (m->slots[h].key == key) return &m->slots[h];
    h = (h + 1) & mask;
  }
  return NULL;
}

/* The value of `key`, or `dflt` when absent. */
static inline intptr_t sp_ptr_map_get(const sp_ptr_map *m, const void *key, intptr_t dflt) {
  const sp_ptr_map_slot *s = sp_ptr_map_find(m, key);
  return s ? s->val : dflt;
}

#endif /* SP_PTR_MAP_H */
