/*
 * reshard_memo.c - layout changes lowered once by the export's own code (see reshard_memo.h).
 *
 * An open-addressing table (linear probing, power-of-two capacity, at most half full) of
 * entries {hash, from, to, steps}; layouts and steps are copied into the memo's arena, so the
 * pointers handed out stay valid until the memo is freed.
 */
#include "search/reshard_memo.h"

#include <stdlib.h>
#include <string.h>

#include "export/reshard_to_collectives.h"
#include "ir/sp_limits.h"

/* Collectives of one lowering the search prices: what a reshard holds after the reduction
 * that may precede it (cost_model.h), two steps. A longer lowering (none of thousands of
 * random pairs of layouts over up to 16 axes and 32 dims needs more than 16) is
 * SP_EUNSUPPORTED: the search never plans it. */
#define MAX_LOWERED (SP_RESHARD_MAX_STEPS - 2)

typedef struct entry {
  uint64_t hash;
  sp_layout *from, *to;     /* NULL: empty slot */
  int64_t *room;            /* [rank] (see room_of); NULL: every dim has room */
  sp_reshard_shape *steps;
  int n;
  int status;               /* SP_OK or SP_EUNSUPPORTED */
} entry;

struct sp_reshard_memo {
  const sp_mesh *mesh;
  int64_t ndevices;         /* the mesh's */
  sp_arena *a;              /* layouts and steps of the entries */
  sp_arena *scratch;        /* one lowering at a time */
  entry *t;
  size_t cap, n;
  int64_t lookups, misses;
};

sp_reshard_memo *sp_reshard_memo_new(const sp_mesh *mesh) {
  sp_reshard_memo *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  m->mesh = mesh;
  m->ndevices = sp_mesh_num_devices(mesh);
  m->a = sp_arena_new(0);
  m->scratch = sp_arena_new(0);
  m->cap = 256;
  m->t = calloc(m->cap, sizeof *m->t);
  if (!m->a || !m->scratch || !m->t) {
    sp_reshard_memo_free(m);
    return NULL;
  }
  return m;
}

void sp_reshard_memo_free(sp_reshard_memo *memo) {
  if (!memo) return;
  sp_arena_free(memo->a);
  sp_arena_free(memo->scratch);
  free(memo->t);
  free(memo);
}

void sp_reshard_memo_stats(const sp_reshard_memo *memo, int64_t *lookups, int64_t *misses) {
  *lookups = memo->lookups;
  *misses = memo->misses;
}

/* ------------------------------------------------------------------ hashing */

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdULL;
}

static sp_layout *copy_layout(sp_arena *a, const sp_layout *l) {
  sp_layout *c = sp_layout_new_unsharded(a, l->rank);
  if (!c) return NULL;
  memcpy(c->start, l->start, (size_t)(l->rank + 1) * sizeof *c->start);
  int n = l->start[l->rank];
  if (n) {
    c->axes = sp_arena_alloc(a, (size_t)n * sizeof *c->axes);
    if (!c->axes) return NULL;
    memcpy(c->axes, l->axes, (size_t)n * sizeof *c->axes);
  }
  return c;
}

static int grow(sp_reshard_memo *m) {
  size_t cap = 2 * m->cap;
  entry *t = calloc(cap, sizeof *t);
  if (!t) return SP_ENOMEM;
  for (size_t i = 0; i < m->cap; i++) {
    if (!m->t[i].from) continue;
    size_t j = m->t[i].hash & (cap - 1);
    while (t[j].from) j = (j + 1) & (cap - 1);
    t[j] = m->t[i];
  }
  free(m->t);
  m->t = t;
  m->cap = cap;
  return SP_OK;
}

/* ------------------------------------------------------------------ room */

static int64_t gcd64(int64_t a, int64_t b) {
  while (b) {
    int64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* What the planner reads of a tensor's dims: whether a dim divides by a product of mesh axis
 * parts, which divides the mesh's device count N; so only gcd(dim, N) matters, and a dim that
 * N divides has room for anything (0). `room` gets rank values; false when every one is 0 (the
 * planner then takes no shape). */
static bool room_of(const sp_reshard_memo *m, const int64_t *shape, int rank, int64_t *room) {
  bool any = false;
  for (int d = 0; d < rank; d++) {
    int64_t g = !shape || shape[d] <= 0 || shape[d] % m->ndevices == 0 ? m->ndevices
                                                                         : gcd64(shape[d], m->ndevices);
    room[d] = g == m->ndevices ? 0 : g;
    any |= room[d] != 0;
  }
  return any;
}

static bool same_room(const int64_t *x, const int64_t *y, int rank) {
  if (!x || !y) return x == y;
  return memcmp(x, y, (size_t)rank * sizeof *x) == 0;
}

/* ------------------------------------------------------------------ lowering */

/* Whether two all_to_all params lists share a dimension (the canonicalizer then keeps both). */
static bool dims_meet(const sp_attr *x, const sp_attr *y) {
  for (int i = 0; i < x->u.all_to_all.n; i++)
    for (int j = 0; j < y->u.all_to_all.n; j++) {
      const sp_all_to_all_param *p = &x->u.all_to_all.v[i], *q = &y->u.all_to_all.v[j];
      if (p->src_dim == q->src_dim || p->src_dim == q->tgt_dim || p->tgt_dim == q->src_dim ||
          p->tgt_dim == q->tgt_dim)
        return true;
    }
  return false;
}

static int cmp_src_dim(const void *x, const void *y) {
  const sp_all_to_all_param *a = x, *b = y;
  return a->src_dim < b->src_dim ? -1 : a->src_dim > b->src_dim;
}

/* From nothing, the pass slices every axis of the target (one all_slice, the target's axes per
 * dim); to nothing, it gathers every axis of the source (one all_gather). Both are found here
 * without running it: `l` is the layout that has the axes. */
static int one_step(sp_reshard_memo *m, sp_collective_kind kind, const sp_layout *l, entry *out) {
  out->n = 1;
  out->steps = sp_arena_calloc(m->a, 1, sizeof *out->steps);
  if (!out->steps) return SP_ENOMEM;
  sp_reshard_shape *sh = out->steps;
  sh->kind = kind;
  int64_t shards = sp_layout_shards(l, m->mesh);
  sh->shards_before = kind == SP_COLL_ALL_SLICE ? 1 : shards;
  sh->shards_after = kind == SP_COLL_ALL_SLICE ? shards : 1;
  for (int d = 0; d < l->rank; d++)
    for (int i = l->start[d]; i < l->start[d + 1]; i++) {
      if (sh->naxes == SP_MAX_MESH_AXES_CLUSTER) return SP_EUNSUPPORTED;
      sh->dim[sh->naxes] = (int8_t)d;
      sh->axes[sh->naxes++] = l->axes[i];
    }
  return SP_OK;
}

/* The export's steps of `from` -> `to`, consecutive all_to_alls over distinct dims fused as
 * sp_canonicalize fuses them, as shapes in `out` (arena). */
static int lower_steps(sp_reshard_memo *m, const sp_layout *from, const sp_layout *to,
                       const int64_t *room, entry *out) {
  sp_arena *s = m->scratch;
  sp_sharding *sf = sp_layout_to_sharding(s, from, m->mesh, "mesh", NULL);
  sp_sharding *st = sp_layout_to_sharding(s, to, m->mesh, "mesh", NULL);
  if (!sf || !st) return SP_ENOMEM;
  sp_reshard_step steps[MAX_LOWERED];
  int n = 0;
  int rc = sp_reshard_to_collectives_steps(s, m->mesh, sf, st, from->rank, room, steps,
                                           MAX_LOWERED, &n);
  if (rc) return rc;
  /* Fuse all_to_all runs: step k joins the run before it when no dimension meets. */
  int k = 0;
  for (int i = 0; i < n; i++) {
    bool join = k > 0 && strcmp(steps[i].op, "sdy.all_to_all") == 0 &&
                strcmp(steps[k - 1].op, "sdy.all_to_all") == 0 &&
                !dims_meet(&steps[k - 1].axes, &steps[i].axes);
    if (!join) {
      steps[k++] = steps[i];
      continue;
    }
    sp_reshard_step *prev = &steps[k - 1];
    int np = prev->axes.u.all_to_all.n + steps[i].axes.u.all_to_all.n;
    sp_all_to_all_param *v = sp_arena_alloc(s, (size_t)np * sizeof *v);
    if (!v) return SP_ENOMEM;
    memcpy(v, prev->axes.u.all_to_all.v, (size_t)prev->axes.u.all_to_all.n * sizeof *v);
    memcpy(v + prev->axes.u.all_to_all.n, steps[i].axes.u.all_to_all.v,
           (size_t)steps[i].axes.u.all_to_all.n * sizeof *v);
    qsort(v, (size_t)np, sizeof *v, cmp_src_dim);
    prev->axes.u.all_to_all.v = v;
    prev->axes.u.all_to_all.n = np;
    prev->after = steps[i].after;
  }
  out->n = k;
  out->steps = k ? sp_arena_alloc(m->a, (size_t)k * sizeof *out->steps) : NULL;
  if (k && !out->steps) return SP_ENOMEM;
  for (int i = 0; i < k; i++) {
    const sp_attr *ax = steps[i].axes.kind ? &steps[i].axes : NULL;
    rc = sp_collective_shape(s, m->mesh, steps[i].op, ax, steps[i].before, steps[i].after,
                             from->rank, &out->steps[i], NULL);
    if (rc) return rc == SP_ENOMEM ? rc : SP_EUNSUPPORTED;
  }
  return SP_OK;
}

static int lower(sp_reshard_memo *m, const sp_layout *from, const sp_layout *to,
                 const int64_t *room, entry *out) {
  if (from->start[from->rank] == 0) return one_step(m, SP_COLL_ALL_SLICE, to, out);
  if (to->start[to->rank] == 0) return one_step(m, SP_COLL_ALL_GATHER, from, out);
  int rc = lower_steps(m, from, to, room, out);
  sp_arena *fresh = sp_arena_new(0);   /* what the lowering allocated goes with the old one */
  if (!fresh) return SP_ENOMEM;
  sp_arena_free(m->scratch);
  m->scratch = fresh;
  return rc;
}

int sp_reshard_memo_get(sp_reshard_memo *memo, const sp_layout *from, const sp_layout *to,
                        const int64_t *shape, const sp_reshard_shape **steps, int *n) {
  *steps = NULL;
  *n = 0;
  memo->lookups++;
  int64_t roombuf[SP_MAX_RANK];
  const int64_t *room = from->rank <= SP_MAX_RANK && room_of(memo, shape, from->rank, roombuf)
                            ? roombuf : NULL;
  uint64_t h = mix(sp_layout_dims_hash(from), sp_layout_dims_hash(to));
  for (int d = 0; room && d < from->rank; d++) h = mix(h, (uint64_t)room[d]);
  size_t j = h & (memo->cap - 1);
  for (; memo->t[j].from; j = (j + 1) & (memo->cap - 1)) {
    entry *e = &memo->t[j];
    if (e->hash == h && sp_layout_equal(e->from, from) && sp_layout_equal(e->to, to) &&
        same_room(e->room, room, from->rank)) {
      *steps = e->steps;
      *n = e->n;
      return e->status;
    }
  }
  memo->misses++;
  entry e = {.hash = h};
  int rc = lower(memo, from, to, room, &e);
  if (rc == SP_EUNSUPPORTED) {
    e.status = rc;
    e.n = 0;
  } else if (rc) {
    return rc;
  }
  e.from = copy_layout(memo->a, from);
  e.to = copy_layout(memo->a, to);
  if (room && !(e.room = sp_arena_alloc(memo->a, (size_t)from->rank * sizeof *e.room)))
    return SP_ENOMEM;
  if (room) memcpy(e.room, room, (size_t)from->rank * sizeof *e.room);
  if (!e.from || !e.to) return SP_ENOMEM;
  if (2 * (memo->n + 1) > memo->cap) {
    if (grow(memo)) return SP_ENOMEM;
    j = h & (memo->cap - 1);
    while (memo->t[j].from) j = (j + 1) & (memo->cap - 1);
  }
  memo->t[j] = e;
  memo->n++;
  *steps = e.steps;
  *n = e.n;
  return e.status;
}
