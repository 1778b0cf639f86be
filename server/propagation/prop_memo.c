/*
 * prop_memo.c - remembered outcomes of propagating through one op (see prop_memo.h).
 *
 * An open-addressing table of entries, at most half full, doubled when it would not be; each
 * entry's copies of the key arrays and its outcome live in the memo's arena. The hash mixes
 * sharding contents with name pointers (names are interned by the reader, so equal shardings
 * almost always hash alike; when they do not, the lookup merely misses). The table stops
 * growing at MAX_ENTRIES: a graph without repetition gains nothing from it.
 */
#include "propagation/prop_memo.h"

#include <stdlib.h>
#include <string.h>

#include "ir/arena.h"
#include "ir/hash_mix.h"

#define MAX_ENTRIES (1u << 17)

typedef struct entry {
  uint64_t hash;
  const sp_rule *rule;           /* NULL = empty slot */
  const sp_mesh *mesh;
  sp_prop_strategy strategy;
  bool conservative, elementwise;
  int n;
  sp_prop_direction *dirs;       /* rule->nfactors entries, or NULL (BOTH everywhere) */
  sp_sharding **in;              /* [n] */
  sp_sharding **out;             /* [n] */
} entry;

/* Hashes of shardings by address, direct-mapped (a collision only costs a recomputation). */
#define HASH_CACHE 4096

typedef struct hash_slot {
  const sp_sharding *s;
  uint64_t hash;
} hash_slot;

struct sp_prop_memo {
  sp_arena *arena;
  entry *v;
  size_t cap, n;
  hash_slot hashes[HASH_CACHE];
};

sp_prop_memo *sp_prop_memo_new(void) {
  sp_prop_memo *m = calloc(1, sizeof *m); /* (hash cache slots start empty) */
  if (!m) return NULL;
  if (!(m->arena = sp_arena_new(0))) {
    free(m);
    return NULL;
  }
  return m;
}

void sp_prop_memo_free(sp_prop_memo *m) {
  if (!m) return;
  sp_arena_free(m->arena);
  free(m->v);
  free(m);
}

#define MIX(h, x) ((h) = sp_hash_mix((h), (uint64_t)(x)))

static void mix_axes(uint64_t *h, const sp_axis_ref *v, int n) {
  MIX(*h, n);
  for (int i = 0; i < n; i++) {
    MIX(*h, (uintptr_t)v[i].name);
    MIX(*h, v[i].pre);
    MIX(*h, v[i].size);
  }
}

static uint64_t sharding_hash(const sp_sharding *s) {
  uint64_t h = SP_HASH_SEED;
  MIX(h, (uintptr_t)s->mesh_name);
  MIX(h, (uintptr_t)s->inline_mesh);
  MIX(h, s->rank);
  for (int d = 0; d < s->rank; d++) {
    MIX(h, s->dims[d].closed * 2 + 1);
    MIX(h, s->dims[d].priority);
    mix_axes(&h, s->dims[d].axes, s->dims[d].naxes);
  }
  mix_axes(&h, s->replicated, s->nreplicated);
  mix_axes(&h, s->unreduced, s->nunreduced);
  return h;
}

static uint64_t cached_hash(sp_prop_memo *m, const sp_sharding *s) {
  hash_slot *slot = &m->hashes[((uintptr_t)s >> 4) & (HASH_CACHE - 1)];
  if (slot->s != s) {
    slot->s = s;
    slot->hash = sharding_hash(s);
  }
  return slot->hash;
}

void sp_prop_memo_hash(sp_prop_memo *m, sp_prop_memo_key *k) {
  uint64_t h = SP_HASH_SEED;
  MIX(h, (uintptr_t)k->rule);
  MIX(h, (uintptr_t)k->mesh);
  MIX(h, k->po->strategy * 4 + k->po->conservative * 2 + k->po->elementwise);
  for (int f = 0; k->po->directions && f < k->rule->nfactors; f++) MIX(h, k->po->directions[f]);
  for (int i = 0; i < k->n; i++) MIX(h, k->in[i] ? cached_hash(m, k->in[i]) : 0x5eed);
  k->hash = h;
}

/* Equal contents, and the very same inline mesh (if any): an outcome refers to it. */
static bool same_sharding(const sp_sharding *a, const sp_sharding *b) {
  if (a == b) return true;
  if (!a || !b || a->inline_mesh != b->inline_mesh) return false;
  return sp_sharding_equal(a, b);
}

static bool matches(const entry *e, const sp_prop_memo_key *k) {
  const sp_prop_options *po = k->po;
  if (e->hash != k->hash || e->rule != k->rule || e->mesh != k->mesh || e->n != k->n ||
      e->strategy != po->strategy || e->conservative != po->conservative ||
      e->elementwise != po->elementwise || (e->dirs == NULL) != (po->directions == NULL))
    return false;
  if (e->dirs &&
      memcmp(e->dirs, po->directions, (size_t)k->rule->nfactors * sizeof *e->dirs) != 0)
    return false;
  for (int i = 0; i < k->n; i++)
    if (!same_sharding(e->in[i], k->in[i])) return false;
  return true;
}

bool sp_prop_memo_find(const sp_prop_memo *m, const sp_prop_memo_key *k, sp_sharding **out) {
  if (!m->cap) return false;
  size_t mask = m->cap - 1;
  for (size_t h = (size_t)k->hash & mask; m->v[h].rule; h = (h + 1) & mask) {
    const entry *e = &m->v[h];
    if (!matches(e, k)) continue;
    memcpy(out, e->out, (size_t)k->n * sizeof *out);
    return true;
  }
  return false;
}

static bool grow(sp_prop_memo *m) {
  size_t cap = m->cap ? 2 * m->cap : 1024;
  entry *v = calloc(cap, sizeof *v);
  if (!v) return false;
  for (size_t i = 0; i < m->cap; i++) {
    if (!m->v[i].rule) continue;
    size_t h = (size_t)m->v[i].hash & (cap - 1);
    while (v[h].rule) h = (h + 1) & (cap - 1);
    v[h] = m->v[i];
  }
  free(m->v);
  m->v = v;
  m->cap = cap;
  return true;
}

void sp_prop_memo_add(sp_prop_memo *m, const sp_prop_memo_key *k, sp_sharding *const *out) {
  if (m->n >= MAX_ENTRIES) return;
  if (2 * (m->n + 1) > m->cap && !grow(m)) return;
  const sp_prop_options *po = k->po;
  size_t arrays = 2 * (size_t)k->n * sizeof(sp_sharding *);
  size_t dirs = po->directions ? (size_t)k->rule->nfactors * sizeof(sp_prop_direction) : 0;
  unsigned char *p = sp_arena_alloc(m->arena, arrays + dirs);
  if (!p) return;
  entry e = {k->hash, k->rule, k->mesh, po->strategy, po->conservative, po->elementwise, k->n,
             NULL, (sp_sharding **)p, (sp_sharding **)p + k->n};
  memcpy(e.in, k->in, (size_t)k->n * sizeof *e.in);
  memcpy(e.out, out, (size_t)k->n * sizeof *e.out);
  if (dirs) {
    e.dirs = (sp_prop_direction *)(p + arrays);
    memcpy(e.dirs, po->directions, dirs);
  }
  size_t mask = m->cap - 1, h = (size_t)k->hash & mask;
  while (m->v[h].rule) h = (h + 1) & mask;
  m->v[h] = e;
  m->n++;
}
