/*
 * reshard_to_collectives.c - reshards to all_slice / all_to_all / all_gather /
 * collective_permute (see reshard_to_collectives.h).
 */
#include "export/reshard_to_collectives.h"

#include <stdlib.h>
#include <string.h>

#include "ir/axis_ref.h"
#include "ir/op_list.h"
#include "propagation/sharding_walk.h"

#define MAX_PIECES 64

/* The pieces of one dimension, major first. */
typedef struct dim_pieces {
  int n;
  sp_axis_ref v[MAX_PIECES];
} dim_pieces;

typedef struct layout {
  int rank;
  dim_pieces *dims;
} layout;

/* ---------------------------------------------------------------- pieces */

/* Every boundary (pre and next of each reference) of axis `name` in s1 and s2. */
static int boundaries(const sp_sharding *s1, const sp_sharding *s2, const char *name, int64_t n,
                      int64_t *out, int cap) {
  int k = 0;
  const sp_sharding *ss[2] = {s1, s2};
  out[k++] = 1;
  out[k++] = n;
  for (int w = 0; w < 2; w++)
    for (int d = 0; ss[w] && d < ss[w]->rank; d++)
      for (int i = 0; i < ss[w]->dims[d].naxes && k + 2 <= cap; i++) {
        const sp_axis_ref *r = &ss[w]->dims[d].axes[i];
        if (strcmp(r->name, name) != 0) continue;
        out[k++] = sp_axis_pre(r);
        out[k++] = sp_axis_next(r, n);
      }
  return k;
}

/* Splits `r` at the boundaries strictly inside it; appends the pieces to `dst`. */
static bool split_ref(const sp_mesh *mesh, const sp_sharding *s1, const sp_sharding *s2,
                      const sp_axis_ref *r, dim_pieces *dst) {
  int64_t n = sp_mesh_axis_size(mesh, r->name);
  if (n <= 0) return false;
  int64_t b[4 * MAX_PIECES];
  int nb = boundaries(s1, s2, r->name, n, b, 4 * MAX_PIECES);
  int64_t lo = sp_axis_pre(r), hi = sp_axis_next(r, n);
  for (;;) {
    int64_t cut = hi;
    for (int i = 0; i < nb; i++)
      if (b[i] > lo && b[i] < cut && b[i] % lo == 0) cut = b[i];
    if (dst->n == MAX_PIECES || cut % lo) return false;
    dst->v[dst->n++] = sp_axis_make(r->name, lo, cut / lo, n);
    if (cut == hi) return true;
    lo = cut;
  }
}

/* `rank` empty dims (only the counts are set: a dim is 1.5 KiB of room). */
static dim_pieces *empty_dims(int rank) {
  dim_pieces *d = malloc((size_t)(rank ? rank : 1) * sizeof *d);
  for (int i = 0; d && i < rank; i++) d[i].n = 0;
  return d;
}

static bool to_layout(const sp_mesh *mesh, const sp_sharding *s, const sp_sharding *s1,
                      const sp_sharding *s2, int rank, layout *out) {
  out->rank = rank;
  out->dims = empty_dims(rank);
  if (!out->dims) return false;
  for (int d = 0; s && d < rank && d < s->rank; d++)
    for (int i = 0; i < s->dims[d].naxes; i++)
      if (!split_ref(mesh, s1, s2, &s->dims[d].axes[i], &out->dims[d])) return false;
  return true;
}

/* The dim of `l` holding piece `r`, -1 if none; *pos its place there. */
static int find_piece(const layout *l, const sp_axis_ref *r, int *pos) {
  for (int d = 0; d < l->rank; d++)
    for (int i = 0; i < l->dims[d].n; i++)
      if (sp_axis_ref_equal(&l->dims[d].v[i], r)) {
        if (pos) *pos = i;
        return d;
      }
  return -1;
}

static bool same_layout(const layout *a, const layout *b) {
  for (int d = 0; d < a->rank; d++) {
    if (a->dims[d].n != b->dims[d].n) return false;
    for (int i = 0; i < a->dims[d].n; i++)
      if (!sp_axis_ref_equal(&a->dims[d].v[i], &b->dims[d].v[i])) return false;
  }
  return true;
}

/* Pieces merged back into axis references (adjacent parts of one axis become one). */
static sp_axis_ref *merged(sp_arena *a, const sp_mesh *mesh, const dim_pieces *p, int *n) {
  sp_axis_ref *v = sp_arena_alloc(a, (size_t)(p->n + 1) * sizeof *v);
  if (!v) return NULL;
  int k = 0;
  for (int i = 0; i < p->n; i++) {
    if (k && sp_axis_can_merge(&v[k - 1], &p->v[i]))
      v[k - 1] = sp_axis_merge(&v[k - 1], &p->v[i], sp_mesh_axis_size(mesh, p->v[i].name));
    else
      v[k++] = p->v[i];
  }
  *n = k;
  return v;
}

static sp_sharding *layout_sharding(sp_arena *a, const sp_mesh *mesh, const layout *l,
                                    const sp_sharding *like) {
  sp_sharding *s = sp_sharding_new(a, like->mesh_name, l->rank, true);
  if (!s) return NULL;
  s->inline_mesh = like->inline_mesh;
  s->unreduced = like->unreduced; /* kept as they are (a change of them is not lowered) */
  s->nunreduced = like->nunreduced;
  s->unreduced_kind = like->unreduced_kind;
  for (int d = 0; d < l->rank; d++) {
    int n;
    sp_axis_ref *v = merged(a, mesh, &l->dims[d], &n);
    if (!v) return NULL;
    s->dims[d].axes = v;
    s->dims[d].naxes = n;
  }
  return s;
}

/* ---------------------------------------------------------------- ops */

typedef struct emitter {
  sp_module *m;           /* NULL when recording */
  sp_arena *a;            /* where new shardings and attributes go */
  const sp_mesh *mesh;
  sp_op *reshard;
  sp_value *cur;          /* the value the next collective reads */
  const sp_sharding *like;
  bool oom;
  /* Recording (sp_reshard_to_collectives_steps): the steps instead of ops. */
  sp_reshard_step *steps;
  int nsteps, cap;
  bool full;              /* a step beyond cap */
  const sp_sharding *cur_s;
} emitter;

static bool emit(emitter *e, const char *name, const layout *after, const sp_attr *lead) {
  sp_sharding *s = layout_sharding(e->a, e->mesh, after, e->like);
  if (!s) {
    e->oom = true;
    return false;
  }
  if (e->steps) {
    if (e->nsteps == e->cap) {
      e->full = true;
      return false;
    }
    sp_reshard_step *st = &e->steps[e->nsteps++];
    st->op = name;
    st->before = e->cur_s;
    st->after = s;
    memset(&st->axes, 0, sizeof st->axes);
    if (lead) st->axes = *lead;
    e->cur_s = s;
    return true;
  }
  sp_value *in = e->cur;
  sp_op *op = sp_op_create(e->a, name, 1, &in, 1, &in->type, 0);
  if (!op || (lead && sp_attrs_set(e->a, &op->attrs, lead))) {
    e->oom = true;
    return false;
  }
  op->loc = e->reshard->loc;
  op->results[0].sharding = s;
  sp_op_insert_before(e->reshard, op);
  e->cur = &op->results[0];
  return true;
}

static sp_attr dim_axes_attr(sp_arena *a, const char *name, const sp_mesh *mesh,
                             const layout *moved, bool *oom) {
  sp_attr at = {.name = name, .kind = SP_ATTR_DIM_AXES};
  sp_dim_sharding *v = sp_arena_calloc(a, (size_t)moved->rank + 1, sizeof *v);
  if (!v) *oom = true;
  for (int d = 0; v && d < moved->rank; d++) {
    v[d].closed = true;
    v[d].priority = SP_NO_PRIORITY;
    v[d].axes = merged(a, mesh, &moved->dims[d], &v[d].naxes);
    if (!v[d].axes) *oom = true;
  }
  at.u.dim_axes.n = moved->rank;
  at.u.dim_axes.v = v;
  return at;
}

static bool any_pieces(const layout *l) {
  for (int d = 0; d < l->rank; d++)
    if (l->dims[d].n) return true;
  return false;
}

static void append(dim_pieces *dst, const sp_axis_ref *v, int n) {
  for (int i = 0; i < n && dst->n < MAX_PIECES; i++) dst->v[dst->n++] = v[i];
}

/* Lowers one reshard whose operand and result share a mesh; false when it must stay. */
static bool lower(emitter *e, const sp_sharding *from, const sp_sharding *to, int rank) {
  layout cur = {0}, tgt = {0}, moved = {0};
  bool ok = to_layout(e->mesh, from, from, to, rank, &cur) &&
            to_layout(e->mesh, to, from, to, rank, &tgt) &&
            (moved.dims = empty_dims(rank)) != NULL;
  moved.rank = rank;
  if (!ok) goto done;
  /* Pieces only the target has replace, in place, pieces of the same size only the source
   * has (a collective_permute does both); the others are sliced onto their target dim. */
  bool permute = false;
  for (int d = 0; d < rank; d++)
    for (int i = 0; i < tgt.dims[d].n; i++) {
      const sp_axis_ref *want = &tgt.dims[d].v[i];
      if (find_piece(&cur, want, NULL) >= 0) continue;
      int64_t size = sp_axis_size(want, sp_mesh_axis_size(e->mesh, want->name));
      bool replaced = false;
      for (int c = 0; c < rank && !replaced; c++)
        for (int k = 0; k < cur.dims[c].n && !replaced; k++) {
          sp_axis_ref *have = &cur.dims[c].v[k];
          if (find_piece(&tgt, have, NULL) >= 0 ||
              sp_axis_size(have, sp_mesh_axis_size(e->mesh, have->name)) != size || c != d)
            continue;
          *have = *want;
          replaced = permute = true;
        }
      if (!replaced) {
        append(&cur.dims[d], want, 1);
        append(&moved.dims[d], want, 1);
      }
    }
  if (any_pieces(&moved)) {
    sp_attr at = dim_axes_attr(e->a, "slicing_axes", e->mesh, &moved, &e->oom);
    /* The slice reaches the layout before the replacements. */
    if (e->oom) goto done;
    if (permute) {
      layout before = {0};  /* to_layout allocates its dims */
      bool ok2 = to_layout(e->mesh, from, from, to, rank, &before);
      if (ok2)
        for (int d = 0; d < rank; d++) append(&before.dims[d], moved.dims[d].v, moved.dims[d].n);
      bool sl = ok2 && emit(e, "sdy.all_slice", &before, &at);
      free(before.dims);
      if (!sl) {
        e->oom |= !ok2;
        goto done;
      }
    } else if (!emit(e, "sdy.all_slice", &cur, &at)) {
      goto done;
    }
  }
  /* Each dim: the pieces it keeps first, in the target's order (swapping them into place),
   * then those that leave the tensor, then those that move to another dim (all_to_all takes
   * the last ones, all_gather the trailing ones after it). */
  for (int d = 0; d < rank; d++) {
    dim_pieces *c = &cur.dims[d];
    int placed = 0;
    for (int i = 0; i < tgt.dims[d].n; i++) {
      int pos, where = find_piece(&cur, &tgt.dims[d].v[i], &pos);
      if (where != d) break;
      if (pos != placed) {
        sp_axis_ref tmp = c->v[placed];
        c->v[placed] = c->v[pos];
        c->v[pos] = tmp;
        permute = true;
      }
      placed++;
    }
    dim_pieces rest, movers;   /* filled from n = 0 (not zeroed: the search lowers often) */
    rest.n = movers.n = 0;
    for (int i = placed; i < c->n; i++) {
      int where = find_piece(&tgt, &c->v[i], NULL);
      if (where >= 0 && where != d) append(&movers, &c->v[i], 1);
      else append(&rest, &c->v[i], 1);
    }
    dim_pieces ordered;
    ordered.n = 0;
    append(&ordered, c->v, placed);
    append(&ordered, rest.v, rest.n);
    append(&ordered, movers.v, movers.n);
    for (int i = 0; i < c->n; i++)
      if (!sp_axis_ref_equal(&ordered.v[i], &c->v[i])) permute = true;
    *c = ordered;
  }
  if (permute && !emit(e, "sdy.collective_permute", &cur, NULL)) goto done;
  /* all_to_all */
  for (bool progress = true; progress;) {
    progress = false;
    for (int t = 0; t < rank && !progress; t++) {
      dim_pieces *ct = &cur.dims[t], *tt = &tgt.dims[t];
      if (ct->n >= tt->n) continue;
      bool prefix = true;
      for (int i = 0; i < ct->n && prefix; i++) prefix = sp_axis_ref_equal(&ct->v[i], &tt->v[i]);
      if (!prefix) continue;
      int pos, s = find_piece(&cur, &tt->v[ct->n], &pos);
      if (s < 0 || s == t) continue;
      dim_pieces *cs = &cur.dims[s];
      int k = cs->n - pos;
      if (ct->n + k > tt->n) continue;
      bool match = true;
      for (int i = 0; i < k && match; i++) match = sp_axis_ref_equal(&cs->v[pos + i], &tt->v[ct->n + i]);
      if (!match) continue;
      sp_all_to_all_param *p = sp_arena_calloc(e->a, 1, sizeof *p);
      int n;
      dim_pieces mv = {0};
      append(&mv, &cs->v[pos], k);
      if (!p || !(p->axes = merged(e->a, e->mesh, &mv, &n))) {
        e->oom = true;
        goto done;
      }
      p->naxes = n;
      p->src_dim = s;
      p->tgt_dim = t;
      append(ct, &cs->v[pos], k);
      cs->n = pos;
      sp_attr at = {.name = "params", .kind = SP_ATTR_ALL_TO_ALL};
      at.u.all_to_all.n = 1;
      at.u.all_to_all.v = p;
      if (!emit(e, "sdy.all_to_all", &cur, &at)) goto done;
      progress = true;
    }
  }
  /* all_gather */
  for (int d = 0; d < rank; d++) moved.dims[d].n = 0;
  for (int d = 0; d < rank; d++) {
    dim_pieces *c = &cur.dims[d];
    int start = c->n;
    while (start > 0 && find_piece(&tgt, &c->v[start - 1], NULL) < 0) start--;
    append(&moved.dims[d], &c->v[start], c->n - start);
    c->n = start;
  }
  if (any_pieces(&moved)) {
    sp_attr at = dim_axes_attr(e->a, "gathering_axes", e->mesh, &moved, &e->oom);
    if (e->oom || !emit(e, "sdy.all_gather", &cur, &at)) goto done;
  }
  /* collective_permute */
  if (!same_layout(&cur, &tgt) && !emit(e, "sdy.collective_permute", &tgt, NULL)) goto done;
done:
  free(cur.dims);
  free(tgt.dims);
  free(moved.dims);
  return ok && !e->oom && !e->full;
}

static bool same_mesh(const sp_module *m, const sp_sharding *a, const sp_sharding *b) {
  if (a->mesh_name && b->mesh_name && strcmp(a->mesh_name, b->mesh_name) == 0) return true;
  const sp_mesh *x = sp_sharding_mesh(m, a), *y = sp_sharding_mesh(m, b);
  return x && y && sp_mesh_equal(x, y);
}

static bool same_unreduced(const sp_sharding *a, const sp_sharding *b) {
  int na = a ? a->nunreduced : 0, nb = b ? b->nunreduced : 0;
  if (na != nb) return false;
  for (int i = 0; i < na; i++)
    if (!sp_axis_ref_equal(&a->unreduced[i], &b->unreduced[i])) return false;
  return true;
}

static bool is_reshard(const sp_op *op) { return op->kind == SP_OP_SDY_RESHARD; }

static int lower_reshard(sp_module *m, sp_op *rs, bool keep_redundant) {
  sp_value *in = rs->operands[0].value;
  const sp_sharding *to = rs->results[0].sharding, *from = in->sharding;
  if (!to) return SP_OK;
  int rank = sp_sharding_rank_of(in->type);
  if (rank < 0 || rank != to->rank || (from && from->rank != rank)) return SP_OK;
  if (!same_unreduced(from, to)) return SP_OK;
  bool from_empty = sp_sharding_is_unsharded(from), to_empty = sp_sharding_is_unsharded(to);
  emitter e = {.m = m, .a = m->arena, .mesh = sp_sharding_mesh(m, to), .reshard = rs, .cur = in,
               .like = to};
  if (from_empty && to_empty) {
    if (keep_redundant) return SP_OK;
  } else if (from && !same_mesh(m, from, to)) {
    if (!to_empty) return SP_OK;
    /* Everything gathered, straight onto the other mesh. */
    layout moved = {0};
    e.mesh = sp_sharding_mesh(m, from);
    e.like = from; /* gathered in place: replicated on the operand's mesh */
    if (!e.mesh || !to_layout(e.mesh, from, from, NULL, rank, &moved)) {
      free(moved.dims);
      return moved.dims || !e.mesh ? SP_OK : SP_ENOMEM;
    }
    sp_attr at = dim_axes_attr(m->arena, "gathering_axes", e.mesh, &moved, &e.oom);
    layout none = {rank, calloc((size_t)(rank ? rank : 1), sizeof(dim_pieces))};
    bool g = !e.oom && none.dims && emit(&e, "sdy.all_gather", &none, &at);
    free(moved.dims);
    free(none.dims);
    if (!g) return SP_ENOMEM;
  } else {
    if (!e.mesh) return SP_OK;
    if (sp_sharding_same_axes(from, to) || (from_empty && to_empty)) {
      if (keep_redundant) return SP_OK;
    } else if (!lower(&e, from, to, rank)) {
      return e.oom ? SP_ENOMEM : SP_OK;
    }
  }
  sp_value_replace_all_uses(&rs->results[0], e.cur);
  sp_op_erase(rs);
  return SP_OK;
}

int sp_reshard_to_collectives_steps(sp_arena *a, const sp_mesh *mesh, const sp_sharding *from,
                                    const sp_sharding *to, int rank, sp_reshard_step *steps,
                                    int cap, int *n) {
  *n = 0;
  if (sp_sharding_is_unsharded(from) && sp_sharding_is_unsharded(to)) return SP_OK;
  if (sp_sharding_same_axes(from, to)) return SP_OK;
  emitter e = {.a = a, .mesh = mesh, .like = to, .steps = steps, .cap = cap, .cur_s = from};
  if (!lower(&e, from, to, rank)) return e.oom ? SP_ENOMEM : SP_EUNSUPPORTED;
  *n = e.nsteps;
  return SP_OK;
}

int sp_export_reshard_to_collectives(sp_module *m, bool keep_redundant, sp_err *err) {
  sp_op_list l = {.keep = is_reshard};
  sp_op_walk(m->op, sp_op_list_collect, &l);
  int rc = l.oom ? SP_ENOMEM : SP_OK;
  for (int i = 0; !rc && i < l.n; i++) rc = lower_reshard(m, l.v[i], keep_redundant);
  sp_op_list_free(&l);
  return rc ? sp_err_set(err, rc, "out of memory lowering reshards to collectives") : SP_OK;
}
