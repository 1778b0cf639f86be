/*
 * reshard_layout.c - the collectives of one reshard, planned over axis pieces (see
 * reshard_layout.h for the order and the rules).
 *
 * Invariant: every list (current and target dims, planned slices) holds pieces that are, two
 * by two, equal or disjoint; a split applies to every list at once. Sizes of current dims only
 * change through all_slice, all_to_all and all_gather; a collective_permute keeps them.
 */
#include "export/reshard_layout.h"

#include <stdlib.h>
#include <string.h>

#include "ir/axis_ref.h"
#include "ir/err.h"
#include "ir/int_math.h"

#define MAX_ROUNDS 8

typedef struct plan {
  const sp_mesh *mesh;
  int rank;
  const int64_t *shape;
  sp_rl_dim *cur, *out, *add, *spare; /* rank dims each */
  bool *grown;                        /* the dim got pieces by size in the slice step */
  int *np;                            /* per target dim: its prefix the permute places */
  bool *runs;                         /* rank x rank scratch */
  bool bad;                           /* a list overflowed */
  sp_rl_emit_fn emit;
  void *ctx;
  int rc;
} plan;

/* ---------------------------------------------------------------- pieces */

static int64_t axis_n(const plan *p, const sp_axis_ref *r) {
  return sp_mesh_axis_size(p->mesh, r->name);
}

static int64_t psize(const plan *p, const sp_axis_ref *r) { return sp_axis_size(r, axis_n(p, r)); }

static int64_t dim_size(const plan *p, const sp_rl_dim *d) {
  int64_t s = 1;
  for (int i = 0; i < d->n; i++) s *= psize(p, &d->v[i]);
  return s;
}

static bool dim_insert(plan *p, sp_rl_dim *d, int at, sp_axis_ref r) {
  if (d->n == SP_RL_MAX_PIECES) {
    p->bad = true;
    return false;
  }
  memmove(&d->v[at + 1], &d->v[at], (size_t)(d->n - at) * sizeof r);
  d->v[at] = r;
  d->n++;
  return true;
}

static sp_axis_ref dim_remove(sp_rl_dim *d, int at) {
  sp_axis_ref r = d->v[at];
  memmove(&d->v[at], &d->v[at + 1], (size_t)(d->n - at - 1) * sizeof r);
  d->n--;
  return r;
}

static void dim_append(plan *p, sp_rl_dim *d, const sp_axis_ref *v, int n) {
  for (int i = 0; i < n; i++)
    if (!dim_insert(p, d, d->n, v[i])) return;
}

/* Splits, in list `d`, the piece of axis `name` that strictly contains boundary `b`. */
static void split_list(plan *p, sp_rl_dim *d, const char *name, int64_t b) {
  for (int i = 0; i < d->n; i++) {
    sp_axis_ref *r = &d->v[i];
    if (strcmp(r->name, name) != 0) continue;
    int64_t n = axis_n(p, r), lo = sp_axis_pre(r), hi = sp_axis_next(r, n);
    if (b <= lo || b >= hi || b % lo || hi % b) continue;
    sp_axis_ref minor = sp_axis_make(name, b, hi / b, n);
    *r = sp_axis_make(name, lo, b / lo, n);
    if (!dim_insert(p, d, i + 1, minor)) return;
    i++;
  }
}

static void split_at(plan *p, const char *name, int64_t b) {
  for (int d = 0; d < p->rank; d++) {
    split_list(p, &p->cur[d], name, b);
    split_list(p, &p->out[d], name, b);
    split_list(p, &p->add[d], name, b);
  }
}

/* The dim of `dims` holding piece `r` (-1 if none); *pos its place. */
static int find(const sp_rl_dim *dims, int rank, const sp_axis_ref *r, int *pos) {
  for (int d = 0; d < rank; d++)
    for (int i = 0; i < dims[d].n; i++)
      if (sp_axis_ref_equal(&dims[d].v[i], r)) {
        if (pos) *pos = i;
        return d;
      }
  return -1;
}

static int out_dim(const plan *p, const sp_axis_ref *r) { return find(p->out, p->rank, r, NULL); }

/* a is a prefix of b. */
static bool is_prefix(const sp_rl_dim *a, const sp_rl_dim *b) {
  if (a->n > b->n) return false;
  for (int i = 0; i < a->n; i++)
    if (!sp_axis_ref_equal(&a->v[i], &b->v[i])) return false;
  return true;
}

/* `d` with adjacent parts of one axis merged, into `m`. */
static void merge_dim(const plan *p, const sp_rl_dim *d, sp_rl_dim *m) {
  m->n = 0;
  for (int i = 0; i < d->n; i++) {
    if (m->n && sp_axis_can_merge(&m->v[m->n - 1], &d->v[i]))
      m->v[m->n - 1] = sp_axis_merge(&m->v[m->n - 1], &d->v[i], axis_n(p, &d->v[i]));
    else
      m->v[m->n++] = d->v[i];
  }
}

static bool same_layout(const plan *p, const sp_rl_dim *a, const sp_rl_dim *b) {
  sp_rl_dim x, y;
  for (int d = 0; d < p->rank; d++) {
    merge_dim(p, &a[d], &x);
    merge_dim(p, &b[d], &y);
    if (x.n != y.n || !is_prefix(&x, &y)) return false;
  }
  return true;
}

static bool done(const plan *p) { return same_layout(p, p->cur, p->out); }

static bool load(plan *p, sp_rl_dim *dst, const sp_sharding *s) {
  for (int d = 0; s && d < p->rank && d < s->rank; d++)
    for (int i = 0; i < s->dims[d].naxes; i++) {
      if (axis_n(p, &s->dims[d].axes[i]) <= 0) return false;
      if (!dim_insert(p, &dst[d], dst[d].n, s->dims[d].axes[i])) return false;
    }
  return true;
}

/* Cuts both sides at every boundary either has. */
static void align(plan *p) {
  sp_rl_dim *lists[2] = {p->cur, p->out};
  for (int w = 0; w < 2; w++)
    for (int d = 0; d < p->rank; d++)
      for (int i = 0; i < lists[w][d].n; i++) {
        sp_axis_ref r = lists[w][d].v[i];
        split_at(p, r.name, sp_axis_pre(&r));
        split_at(p, r.name, sp_axis_next(&r, axis_n(p, &r)));
      }
}

static void emit(plan *p, sp_rl_kind kind, const sp_rl_dim *axes, int src, int tgt) {
  if (p->rc || p->bad) return;
  sp_rl_step s = {.kind = kind, .after = p->cur, .axes = axes, .src = src, .tgt = tgt};
  p->rc = p->emit(p->ctx, &s);
}

static void clear(sp_rl_dim *dims, int rank) {
  for (int d = 0; d < rank; d++) dims[d].n = 0;
}

/* ---------------------------------------------------------------- all_slice */

static bool absent(const plan *p, const sp_axis_ref *r) {
  return find(p->cur, p->rank, r, NULL) < 0 && find(p->add, p->rank, r, NULL) < 0;
}

/* A piece held (or planned) that overlaps `r` without being it: sub-axes that cannot coexist
 * (x:(1)2 and x:(1)3 of a 6), so `r` cannot come in before that one is gathered. */
static bool clashes(const plan *p, const sp_axis_ref *r) {
  const sp_rl_dim *lists[2] = {p->cur, p->add};
  for (int w = 0; w < 2; w++)
    for (int d = 0; d < p->rank; d++)
      for (int i = 0; i < lists[w][d].n; i++) {
        const sp_axis_ref *h = &lists[w][d].v[i];
        if (!sp_axis_ref_equal(h, r) && sp_axis_overlaps(h, r, axis_n(p, r))) return true;
      }
  return false;
}

/* A missing piece that can be sliced (or permuted in) now. */
static bool can_enter(const plan *p, const sp_axis_ref *r) { return absent(p, r) && !clashes(p, r); }

/* The dim whose pieces (with those planned on it) end with `r`, -1 if none. */
static int ending_with(const plan *p, const sp_axis_ref *r) {
  for (int d = 0; d < p->rank; d++) {
    const sp_rl_dim *l = p->add[d].n ? &p->add[d] : &p->cur[d];
    if (l->n && sp_axis_ref_equal(&l->v[l->n - 1], r)) return d;
  }
  return -1;
}

/* Whether the tensor's dim `d` divides by its current size (and planned pieces) times `extra`. */
static bool fits(const plan *p, int d, int64_t extra) {
  if (!p->shape || p->shape[d] <= 0) return true;
  int64_t s = dim_size(p, &p->cur[d]) * dim_size(p, &p->add[d]) * extra;
  return p->shape[d] % s == 0;
}

/* Missing pieces that follow, in their target dim, the last piece of the dim an all_to_all
 * will carry them from are sliced there. */
static void slice_on_src_dims(plan *p) {
  for (int t = 0; t < p->rank; t++) {
    const sp_rl_dim *o = &p->out[t];
    if (!is_prefix(&p->cur[t], o)) continue;
    for (int i = 1; i < o->n; i++) {
      if (!can_enter(p, &o->v[i])) continue;
      int j = i;
      int64_t extra = 1;
      while (j < o->n && can_enter(p, &o->v[j])) extra *= psize(p, &o->v[j++]);
      int s = ending_with(p, &o->v[i - 1]);
      if (s >= 0 && s != t && is_prefix(&p->out[s], &p->cur[s]) && fits(p, s, extra))
        dim_append(p, &p->add[s], &o->v[i], j - i);
      i = j - 1;
    }
  }
}

static int64_t growth(const plan *p, int d) {
  int64_t c = dim_size(p, &p->cur[d]) * dim_size(p, &p->add[d]), t = dim_size(p, &p->out[d]);
  return t / sp_gcd64(c, t);
}

/* Plans piece `i` of target dim `t` (its major part when only that fits `*f`) on dim `d`. */
static void take(plan *p, int d, int t, int i, int64_t *f) {
  sp_axis_ref r = p->out[t].v[i];
  int64_t s = psize(p, &r), g = sp_gcd64(s, *f);
  if (g == 1) return;
  if (g < s) {
    split_at(p, r.name, sp_axis_pre(&r) * g);
    r = p->out[t].v[i];
  }
  dim_append(p, &p->add[d], &r, 1);
  *f /= g;
  p->grown[d] = true;
}

/* The size of the pieces of dim `d` no target dim has (a collective_permute can put a missing
 * piece in their place). */
static int64_t leftover_size(const plan *p, int d) {
  int64_t s = 1;
  for (int i = 0; i < p->cur[d].n; i++)
    if (out_dim(p, &p->cur[d].v[i]) < 0) s *= psize(p, &p->cur[d].v[i]);
  return s;
}

/* Each dim grows towards its target size: its own missing pieces first, then others' (those
 * that cannot take the place of leftovers in their own dim). */
static void slice_by_size(plan *p) {
  for (int d = 0; d < p->rank; d++) {
    int64_t f = growth(p, d);
    for (int i = 0; i < p->out[d].n && f > 1; i++)
      if (can_enter(p, &p->out[d].v[i])) take(p, d, d, i, &f);
  }
  for (int d = 0; d < p->rank; d++) {
    int64_t f = growth(p, d);
    for (int t = 0; t < p->rank && f > 1; t++)
      for (int i = 0; i < p->out[t].n && f > 1; i++)
        if (t != d && can_enter(p, &p->out[t].v[i]) &&
            leftover_size(p, t) % psize(p, &p->out[t].v[i]) != 0 &&
            fits(p, d, sp_gcd64(psize(p, &p->out[t].v[i]), f)))
          take(p, d, t, i, &f);
  }
}

static bool slice_step(plan *p) {
  clear(p->add, p->rank);
  slice_on_src_dims(p);
  slice_by_size(p);
  bool any = false;
  for (int d = 0; d < p->rank; d++) {
    any |= p->add[d].n > 0;
    dim_append(p, &p->cur[d], p->add[d].v, p->add[d].n);
  }
  if (any) emit(p, SP_RL_ALL_SLICE, p->add, 0, 0);
  return any;
}

/* Late slices: a dim that holds a prefix of its target, whose other pieces are all missing. */
static bool slice_tails(plan *p) {
  clear(p->add, p->rank);
  bool any = false;
  for (int t = 0; t < p->rank; t++) {
    const sp_rl_dim *c = &p->cur[t], *o = &p->out[t];
    if (c->n == o->n || !is_prefix(c, o)) continue;
    bool all = true;
    for (int i = c->n; i < o->n && all; i++) all = can_enter(p, &o->v[i]);
    if (!all) continue;
    dim_append(p, &p->add[t], &o->v[c->n], o->n - c->n);
    any = true;
  }
  for (int d = 0; any && d < p->rank; d++) dim_append(p, &p->cur[d], p->add[d].v, p->add[d].n);
  if (any) emit(p, SP_RL_ALL_SLICE, p->add, 0, 0);
  return any;
}

/* ---------------------------------------------------------------- collective_permute */

/* The longest prefix of target dim `t` whose size divides `room` (its last piece cut to its
 * major part when only that divides). */
static int fitting_prefix(plan *p, int t, int64_t room) {
  for (int i = 0; i < p->out[t].n; i++) {
    sp_axis_ref r = p->out[t].v[i];
    int64_t s = psize(p, &r);
    if (room % s == 0) {
      room /= s;
      continue;
    }
    int64_t g = sp_gcd64(s, room);
    if (g > 1) {
      split_at(p, r.name, sp_axis_pre(&r) * g);
      return i + 1;
    }
    return i;
  }
  return p->out[t].n;
}

static bool in_prefix(const plan *p, int t, const sp_axis_ref *r) {
  for (int j = 0; j < p->np[t]; j++)
    if (sp_axis_ref_equal(&p->out[t].v[j], r)) return true;
  return false;
}

/* Moves piece `from` of dim `t` to `to` (< from): a swap when both have one size, else the
 * pieces between shift. */
static void move_within(plan *p, int t, int from, int to) {
  sp_rl_dim *d = &p->cur[t];
  if (from == to) return;
  if (psize(p, &d->v[from]) == psize(p, &d->v[to])) {
    sp_axis_ref x = d->v[from];
    d->v[from] = d->v[to];
    d->v[to] = x;
    return;
  }
  sp_axis_ref r = dim_remove(d, from);
  dim_insert(p, d, to, r);
}

/* A piece of dim `t`, from `i` on, outside its placed prefix, of size `want`; -1 if none. */
static int victim_of_size(const plan *p, int t, int i, int64_t want) {
  for (int k = i; k < p->cur[t].n; k++)
    if (!in_prefix(p, t, &p->cur[t].v[k]) && psize(p, &p->cur[t].v[k]) == want) return k;
  return -1;
}

/* Target piece `r` (held in dim `s` at `pos`, or nowhere: s < 0) takes the place, at `i` of
 * dim `t`, of several smaller pieces whose sizes make its size; they go where it was. False
 * when no such pieces exist. */
static bool swap_for_several(plan *p, int t, int i, sp_axis_ref r, int s, int pos) {
  sp_rl_dim *d = &p->cur[t];
  int64_t want = psize(p, &r), prod = 1;
  int idx[SP_RL_MAX_PIECES], nv = 0;
  for (int k = i; k < d->n && prod < want; k++) {
    int64_t sz = psize(p, &d->v[k]);
    if (in_prefix(p, t, &d->v[k]) || want % (prod * sz)) continue;
    idx[nv++] = k;
    prod *= sz;
  }
  if (nv < 2 || prod != want) return false;
  sp_rl_dim moved = {0};
  for (int k = nv - 1; k >= 0; k--) dim_insert(p, &moved, 0, dim_remove(d, idx[k]));
  if (s >= 0) {
    dim_remove(&p->cur[s], pos);
    for (int k = 0; k < moved.n; k++) dim_insert(p, &p->cur[s], pos + k, moved.v[k]);
  }
  dim_insert(p, d, i, r);
  return true;
}

/* A part of size `want` of a bigger piece of dim `t` from `i` on, split off: its major part,
 * its minor part in a dim the slice grew. The part's place, or -1. */
static int split_victim(plan *p, int t, int i, int64_t want) {
  sp_rl_dim *d = &p->cur[t];
  for (int k = i; k < d->n; k++) {
    sp_axis_ref b = d->v[k];
    int64_t sz = psize(p, &b);
    if (in_prefix(p, t, &b) || sz <= want || sz % want) continue;
    int64_t lo = sp_axis_pre(&b), hi = sp_axis_next(&b, axis_n(p, &b));
    split_at(p, b.name, p->grown[t] ? hi / want : lo * want);
    /* No split (the boundary is the piece's own end: `want` 1, a size-1 axis): no part of
     * the wanted size, and nothing past the list's end. */
    int part = p->grown[t] ? k + 1 : k;
    if (part < d->n && psize(p, &d->v[part]) == want) return part;
  }
  return -1;
}

/* Puts target piece `i` of dim `t` in place `i`; false when nothing can make room for it. A
 * piece of its size swaps with it (or goes, when it is held nowhere), else several smaller
 * ones, else a part of a bigger one. */
static bool bring(plan *p, int t, int i) {
  sp_axis_ref r = p->out[t].v[i];
  int pos = 0, s = find(p->cur, p->rank, &r, &pos);
  sp_rl_dim *d = &p->cur[t];
  if (s == t) {
    move_within(p, t, pos, i);
    return true;
  }
  if (s < 0 && clashes(p, &r)) return false;
  int64_t want = psize(p, &r);
  int v = victim_of_size(p, t, i, want);
  if (v < 0 && swap_for_several(p, t, i, r, s, pos)) return true;
  if (v < 0 && (v = split_victim(p, t, i, want)) < 0) return false;
  if (s >= 0) {
    sp_axis_ref x = d->v[v];
    d->v[v] = p->cur[s].v[pos];
    p->cur[s].v[pos] = x;
  } else {
    d->v[v] = r;
  }
  move_within(p, t, v, i);
  return true;
}

/* The target dim of current piece `r` when it is a mover (in the part of its target dim after
 * the placed prefix, away from it), else -1. */
static int mover_tgt(const plan *p, const sp_axis_ref *r, int where, const int *mv_end) {
  for (int t = 0; t < p->rank; t++)
    for (int i = p->np[t]; i < mv_end[t]; i++)
      if (sp_axis_ref_equal(&p->out[t].v[i], r)) return t != where ? t : -1;
  return -1;
}

/* Whether the current pieces of dim `d` after its prefix are: leftovers, then one group per
 * target dim, each its chunk in target order (`chunk` per target dim, as assigned). */
static bool arranged(const plan *p, int d, const sp_rl_dim *chunk, const int *mv_end) {
  const sp_rl_dim *c = &p->cur[d];
  int k = p->np[d];
  while (k < c->n && mover_tgt(p, &c->v[k], d, mv_end) < 0) k++;
  bool *seen = p->runs;   /* rank entries */
  for (int t = 0; t < p->rank; t++) seen[t] = false;
  while (k < c->n) {
    int t = mover_tgt(p, &c->v[k], d, mv_end);
    if (t < 0 || seen[t]) return false;
    seen[t] = true;
    for (int i = 0; i < chunk[t].n; i++, k++)
      if (k >= c->n || !sp_axis_ref_equal(&c->v[k], &chunk[t].v[i])) return false;
  }
  for (int t = 0; t < p->rank; t++)
    if (chunk[t].n && !seen[t]) return false;
  return true;
}

/* Movers where they are (chunks[s * rank + t]: those of target dim t in source dim s); false
 * when some source dim holds two runs of one target dim. */
static bool movers_where_they_are(plan *p, sp_rl_dim *chunks, const int *mv_end) {
  int rank = p->rank;
  for (int k = 0; k < rank * rank; k++) p->runs[k] = false;
  for (int t = 0; t < rank; t++)
    for (int i = p->np[t], prev = -1; i < mv_end[t]; i++) {
      int s = find(p->cur, rank, &p->out[t].v[i], NULL);
      if (s != prev && p->runs[s * rank + t]) return false;
      p->runs[s * rank + t] = true;
      prev = s;
      dim_append(p, &chunks[s * rank + t], &p->out[t].v[i], 1);
    }
  return true;
}

/* Movers in dim order, by the room each source dim has beside its prefix and leftovers;
 * false when they do not fit. */
static bool movers_by_room(plan *p, sp_rl_dim *chunks, const int *mv_end, int64_t *room) {
  int rank = p->rank;
  clear(chunks, rank * rank);
  for (int d = 0; d < rank; d++) {
    room[d] = dim_size(p, &p->cur[d]);
    for (int k = 0; k < p->cur[d].n; k++)
      if (k < p->np[d] || mover_tgt(p, &p->cur[d].v[k], d, mv_end) < 0)
        room[d] /= psize(p, &p->cur[d].v[k]);
  }
  for (int t = 0; t < rank; t++) {
    int i = p->np[t];
    for (int s = 0; s < rank && i < mv_end[t]; s++)
      while (s != t && i < mv_end[t] && room[s] % psize(p, &p->out[t].v[i]) == 0) {
        room[s] /= psize(p, &p->out[t].v[i]);
        dim_append(p, &chunks[s * rank + t], &p->out[t].v[i++], 1);
      }
    if (i < mv_end[t]) return false;
  }
  return true;
}

/* Every dim as prefix, leftovers (in their order), then its chunks by target dim; a dim
 * already so arranged (movers where they are) keeps its order. */
static void lay_out(plan *p, const sp_rl_dim *chunks, const int *mv_end, bool here) {
  int rank = p->rank;
  for (int d = 0; d < rank; d++) {
    sp_rl_dim *n = &p->spare[d];
    const sp_rl_dim *c = &p->cur[d];
    if (here && arranged(p, d, &chunks[d * rank], mv_end)) {
      *n = *c;
      continue;
    }
    n->n = 0;
    dim_append(p, n, c->v, p->np[d]);
    for (int k = p->np[d]; k < c->n; k++)
      if (mover_tgt(p, &c->v[k], d, mv_end) < 0) dim_append(p, n, &c->v[k], 1);
    for (int t = 0; t < rank; t++) dim_append(p, n, chunks[d * rank + t].v, chunks[d * rank + t].n);
  }
  memcpy(p->cur, p->spare, (size_t)rank * sizeof *p->cur);
}

/* Assigns the movers (target pieces past the placed prefixes, held away from their target
 * dim) to source dims and lays every dim out; the layout stays when they do not fit. */
static void place_movers(plan *p) {
  int rank = p->rank;
  size_t r = (size_t)(rank ? rank : 1);   /* never malloc(0) */
  int *mv_end = malloc(r * sizeof *mv_end);
  sp_rl_dim *chunks = malloc(r * r * sizeof *chunks); /* [s][t] */
  int64_t *room = malloc(r * sizeof *room);
  if (!mv_end || !chunks || !room) {
    p->rc = SP_ENOMEM;
    goto fail;
  }
  clear(chunks, rank * rank);   /* only the counts: a dim is 1.5 KiB of room */
  for (int t = 0; t < rank; t++) {
    int i = p->np[t];
    while (i < p->out[t].n) {
      int s = find(p->cur, rank, &p->out[t].v[i], NULL);
      if (s < 0 || s == t) break;
      i++;
    }
    mv_end[t] = i;
  }
  bool here = movers_where_they_are(p, chunks, mv_end);
  if (here || movers_by_room(p, chunks, mv_end, room)) lay_out(p, chunks, mv_end, here);
fail:
  free(mv_end);
  free(chunks);
  free(room);
}

static bool permute_step(plan *p, bool force) {
  sp_rl_dim *before = malloc((size_t)(p->rank ? p->rank : 1) * sizeof *before);
  if (!before) {
    p->rc = SP_ENOMEM;
    return false;
  }
  memcpy(before, p->cur, (size_t)p->rank * sizeof *before);
  clear(p->add, p->rank);   /* nothing planned: what clashes is what is held */
  for (int t = 0; t < p->rank; t++) p->np[t] = fitting_prefix(p, t, dim_size(p, &p->cur[t]));
  for (int t = 0; t < p->rank; t++) {
    /* np[t] (the whole prefix) is kept out of the victims while it is placed. */
    for (int i = 0; i < p->np[t]; i++)
      if (!bring(p, t, i)) {
        p->np[t] = i;
        break;
      }
  }
  place_movers(p);
  bool changed = !same_layout(p, before, p->cur);
  free(before);
  if (changed || force) emit(p, SP_RL_PERMUTE, NULL, 0, 0);
  return changed || force;
}

/* ---------------------------------------------------------------- all_to_all, all_gather */

/* One all_to_all: a source dim's trailing pieces of one target dim, when they are what that
 * dim needs next (or, `relaxed`, whatever the target dim holds). */
static bool all_to_all_step(plan *p, bool relaxed) {
  for (int s = 0; s < p->rank; s++) {
    sp_rl_dim *c = &p->cur[s];
    if (!c->n) continue;
    int t = out_dim(p, &c->v[c->n - 1]);
    if (t < 0 || t == s) continue;
    int k = 1;
    while (k < c->n && out_dim(p, &c->v[c->n - 1 - k]) == t) k++;
    sp_rl_dim *ct = &p->cur[t];
    const sp_rl_dim *o = &p->out[t];
    if (!relaxed) {
      if (!is_prefix(ct, o) || ct->n + k > o->n) continue;
      bool next = true;
      for (int i = 0; i < k && next; i++)
        next = sp_axis_ref_equal(&c->v[c->n - k + i], &o->v[ct->n + i]);
      if (!next) continue;
    }
    sp_rl_dim *moved = &p->spare[0];
    moved->n = 0;
    dim_append(p, moved, &c->v[c->n - k], k);
    dim_append(p, ct, moved->v, k);
    c->n -= k;
    emit(p, SP_RL_ALL_TO_ALL, moved, s, t);
    return true;
  }
  return false;
}

static bool gather_step(plan *p) {
  clear(p->add, p->rank);
  bool any = false;
  for (int d = 0; d < p->rank; d++) {
    sp_rl_dim *c = &p->cur[d];
    int start = c->n;
    while (start > 0 && out_dim(p, &c->v[start - 1]) < 0) start--;
    dim_append(p, &p->add[d], &c->v[start], c->n - start);
    any |= start < c->n;
    c->n = start;
  }
  if (any) emit(p, SP_RL_ALL_GATHER, p->add, 0, 0);
  return any;
}

/* What no rule moved: gather everything, slice the target. */
static void last_resort(plan *p) {
  bool any = false;
  for (int d = 0; d < p->rank; d++) {
    p->add[d] = p->cur[d];
    any |= p->cur[d].n > 0;
  }
  clear(p->cur, p->rank);
  if (any) emit(p, SP_RL_ALL_GATHER, p->add, 0, 0);
  any = false;
  for (int d = 0; d < p->rank; d++) {
    p->add[d] = p->out[d];
    p->cur[d] = p->out[d];
    any |= p->out[d].n > 0;
  }
  if (any) emit(p, SP_RL_ALL_SLICE, p->add, 0, 0);
}

int sp_rl_plan(const sp_mesh *mesh, const sp_sharding *from, const sp_sharding *to, int rank,
               const int64_t *shape, bool force_permute, sp_rl_emit_fn emit_fn, void *ctx) {
  plan p = {.mesh = mesh, .rank = rank, .shape = shape, .emit = emit_fn, .ctx = ctx};
  size_t r = (size_t)(rank ? rank : 1);
  sp_rl_dim *dims = malloc(4 * r * sizeof *dims);   /* counts cleared below, not the room */
  p.grown = calloc(r, sizeof *p.grown);
  p.np = calloc(r, sizeof *p.np);
  p.runs = calloc(r * r, sizeof *p.runs);
  if (!dims || !p.grown || !p.np || !p.runs) {
    p.rc = SP_ENOMEM;
    goto out;
  }
  clear(dims, (int)(4 * r));
  p.cur = dims;
  p.out = dims + r;
  p.add = dims + 2 * r;
  p.spare = dims + 3 * r;
  if (!load(&p, p.cur, from) || !load(&p, p.out, to)) {
    p.rc = SP_EUNSUPPORTED;
    goto out;
  }
  align(&p);
  slice_step(&p);
  bool force = force_permute;
  for (int round = 0; round < MAX_ROUNDS && !p.rc && !p.bad && (force || !done(&p)); round++) {
    bool moved = permute_step(&p, force);
    force = false;
    while (all_to_all_step(&p, false)) moved = true;
    moved |= gather_step(&p);
    moved |= slice_tails(&p);
    if (!moved && !done(&p)) moved = all_to_all_step(&p, true);
    if (!moved) break;
  }
  if (!p.rc && !p.bad && !done(&p)) last_resort(&p);
  if (p.bad && !p.rc) p.rc = SP_EUNSUPPORTED;
out:
  free(dims);
  free(p.grown);
  free(p.np);
  free(p.runs);
  return p.rc;
}
