/*
 * sg_model.c - the solver's working form of a strategy graph (see sg_model_int.h).
 *
 * Arrays that grow (adjacency, segments, edges, the elimination stack) double inside the
 * model's arena; arrays that shrink (strategy removal) are rebuilt in the arena. The arena
 * therefore holds some dead copies, bounded by a small multiple of the model's size.
 */
#include "solver/sg_model_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_LIMIT_CAP (INT64_MAX / 4)

static int cmp_i64(const void *p, const void *q) {
  int64_t x = *(const int64_t *)p, y = *(const int64_t *)q;
  return (x > y) - (x < y);
}

static int time_index(const sg_model *m, int64_t t) {
  int lo = 0, hi = m->T;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (m->times[mid] < t) lo = mid + 1; else hi = mid;
  }
  return lo;
}

static bool has_usage(const sp_sg_node *nd) {
  if (nd->live.start >= nd->live.end) return false;
  for (int k = 0; k < nd->nstrat; k++)
    if (nd->usages[k] != 0 && nd->costs[k] < SP_SG_FORBIDDEN) return true;
  return false;
}

static int build_times(sg_model *m) {
  const sp_sg *g = m->g;
  int64_t *t = malloc(sizeof(int64_t) * (2 * (size_t)g->nnodes + 1));
  if (!t) return SP_ENOMEM;
  int nt = 0;
  for (int i = 0; i < g->nnodes; i++) {
    if (!has_usage(&g->nodes[i])) continue;
    t[nt++] = g->nodes[i].live.start;
    t[nt++] = g->nodes[i].live.end;
  }
  qsort(t, (size_t)nt, sizeof *t, cmp_i64);
  int u = 0;
  for (int k = 0; k < nt; k++)
    if (u == 0 || t[u - 1] != t[k]) t[u++] = t[k];
  /* The last boundary only ends intervals: no point starts there. */
  m->T = u > 0 ? u - 1 : 0;
  m->times = sp_arena_alloc(m->arena, sizeof(int64_t) * (size_t)(u + 1));
  m->cap = sp_arena_alloc(m->arena, sizeof(int64_t) * (size_t)(u + 1));
  if (!m->times || !m->cap) { free(t); return SP_ENOMEM; }
  memcpy(m->times, t, sizeof(int64_t) * (size_t)u);
  free(t);
  for (int k = 0; k < m->T; k++) m->cap[k] = m->has_limit ? m->g->usage_limit : NO_LIMIT_CAP;
  return SP_OK;
}

/* Node i with the input's allowed strategies and one segment over its live interval. */
static int build_node(sg_model *m, int i) {
  const sp_sg_node *nd = &m->g->nodes[i];
  sg_mnode *x = &m->node[i];
  x->alive = true;
  x->cost = sp_arena_alloc(m->arena, sizeof(int64_t) * (size_t)nd->nstrat);
  x->orig = sp_arena_alloc(m->arena, sizeof(int) * (size_t)nd->nstrat);
  if (!x->cost || !x->orig) return SP_ENOMEM;
  for (int k = 0; k < nd->nstrat; k++) {
    if (nd->costs[k] >= SP_SG_FORBIDDEN) continue;
    x->cost[x->k] = nd->costs[k];
    x->orig[x->k++] = k;
  }
  if (x->k == 0) {
    m->infeasible = true;
    snprintf(m->why, sizeof m->why, "every strategy of node %d is forbidden", i);
    return SP_OK;
  }
  if (!has_usage(nd)) return SP_OK;
  int64_t *use = sp_arena_alloc(m->arena, sizeof(int64_t) * (size_t)x->k);
  if (!use) return SP_ENOMEM;
  for (int k = 0; k < x->k; k++) use[k] = nd->usages[x->orig[k]];
  int t0 = time_index(m, nd->live.start), t1 = time_index(m, nd->live.end);
  return sp_sg_model_add_usage(m, i, t0, t1, use);
}

/* Edge e of the input restricted to the allowed strategies of its ends. */
static int build_edge(sg_model *m, int e) {
  const sp_sg_edge *ed = &m->g->edges[e];
  const sg_mnode *a = &m->node[ed->a], *b = &m->node[ed->b];
  int nb_in = m->g->nodes[ed->b].nstrat;
  int64_t *c = malloc(sizeof(int64_t) * (size_t)a->k * (size_t)b->k + 1);
  if (!c) return SP_ENOMEM;
  for (int ka = 0; ka < a->k; ka++)
    for (int kb = 0; kb < b->k; kb++) {
      int64_t v = ed->costs[(int64_t)a->orig[ka] * nb_in + b->orig[kb]];
      c[(int64_t)ka * b->k + kb] = v >= SP_SG_FORBIDDEN ? SP_SG_FORBIDDEN : v;
    }
  int rc = sp_sg_model_add_edge(m, ed->a, ed->b, c);
  free(c);
  return rc;
}

int sp_sg_model_build(const sp_sg *g, sg_model **out, sp_err *err) {
  *out = NULL;
  sp_arena *a = sp_arena_new(1 << 20);
  if (!a) return sp_err_set(err, SP_ENOMEM, "out of memory building the model");
  sg_model *m = sp_arena_calloc(a, 1, sizeof *m);
  if (!m) goto oom;
  m->arena = a;
  m->g = g;
  m->n = g->nnodes;
  m->has_limit = g->usage_limit != SP_SG_NO_LIMIT;
  m->node = sp_arena_calloc(a, (size_t)g->nnodes + 1, sizeof *m->node);
  if (!m->node || build_times(m) != SP_OK) goto oom;
  for (int i = 0; i < g->nnodes; i++)
    if (build_node(m, i) != SP_OK) goto oom;
  if (!m->infeasible)
    for (int e = 0; e < g->nedges; e++)
      if (build_edge(m, e) != SP_OK) goto oom;
  *out = m;
  return SP_OK;
oom:
  sp_arena_free(a);
  return sp_err_set(err, SP_ENOMEM, "out of memory building the model");
}

void sp_sg_model_free(sg_model *m) {
  if (m) sp_arena_free(m->arena);
}

/* ------------------------------------------------------------------ editing */

static int find_edge(const sg_model *m, int a, int b) {
  const sg_mnode *x = m->node[a].deg <= m->node[b].deg ? &m->node[a] : &m->node[b];
  for (int j = 0; j < x->deg; j++) {
    const sg_medge *e = &m->edge[x->adj[j]];
    if ((e->a == a && e->b == b) || (e->a == b && e->b == a)) return x->adj[j];
  }
  return -1;
}

static int adj_push(sg_model *m, int i, int e) {
  sg_mnode *x = &m->node[i];
  if (sp_arena_grow(m->arena, (void **)&x->adj, &x->capadj, x->deg, sizeof(int))) return SP_ENOMEM;
  x->adj[x->deg++] = e;
  return SP_OK;
}

static void adj_remove(sg_model *m, int i, int e) {
  sg_mnode *x = &m->node[i];
  for (int j = 0; j < x->deg; j++)
    if (x->adj[j] == e) {
      memmove(&x->adj[j], &x->adj[j + 1], sizeof(int) * (size_t)(x->deg - j - 1));
      x->deg--;
      return;
    }
}

int sp_sg_model_add_edge(sg_model *m, int a, int b, const int64_t *c) {
  int ka = m->node[a].k, kb = m->node[b].k;
  int e = find_edge(m, a, b);
  if (e >= 0) {
    sg_medge *x = &m->edge[e];
    for (int i = 0; i < ka; i++)
      for (int j = 0; j < kb; j++) {
        int64_t *dst = x->a == a ? &x->c[(int64_t)i * kb + j] : &x->c[(int64_t)j * ka + i];
        *dst = sg_add(*dst, c[(int64_t)i * kb + j]);
      }
    return SP_OK;
  }
  if (sp_arena_grow(m->arena, (void **)&m->edge, &m->capm, m->m, sizeof *m->edge)) return SP_ENOMEM;
  sg_medge *x = &m->edge[m->m];
  x->alive = true;
  x->a = a;
  x->b = b;
  x->c = sp_arena_alloc(m->arena, sizeof(int64_t) * (size_t)ka * (size_t)kb);
  if (!x->c) return SP_ENOMEM;
  memcpy(x->c, c, sizeof(int64_t) * (size_t)ka * (size_t)kb);
  if (adj_push(m, a, m->m) || adj_push(m, b, m->m)) return SP_ENOMEM;
  m->m++;
  return SP_OK;
}

void sp_sg_model_kill_edge(sg_model *m, int e) {
  sg_medge *x = &m->edge[e];
  if (!x->alive) return;
  x->alive = false;
  adj_remove(m, x->a, e);
  adj_remove(m, x->b, e);
}

void sp_sg_model_kill_node(sg_model *m, int i) {
  sg_mnode *x = &m->node[i];
  while (x->deg > 0) sp_sg_model_kill_edge(m, x->adj[0]);
  x->alive = false;
  x->nseg = 0;
}

int sp_sg_model_keep(sg_model *m, int i, const bool *keep) {
  sg_mnode *x = &m->node[i];
  int nk = 0;
  for (int k = 0; k < x->k; k++) nk += keep[k];
  if (nk == x->k) return SP_OK;
  if (nk == 0) {
    m->infeasible = true;
    snprintf(m->why, sizeof m->why, "no strategy of node %d can be part of a valid plan", i);
    return SP_OK;
  }
  int *map = malloc(sizeof(int) * (size_t)x->k);
  if (!map) return SP_ENOMEM;
  for (int k = 0, j = 0; k < x->k; k++) map[k] = keep[k] ? j++ : -1;
  for (int k = 0; k < x->k; k++)
    if (keep[k]) {
      x->cost[map[k]] = x->cost[k];
      x->orig[map[k]] = x->orig[k];
    }
  for (int s = 0; s < x->nseg; s++)
    for (int k = 0; k < x->k; k++)
      if (keep[k]) x->seg[s].use[map[k]] = x->seg[s].use[k];
  int rc = SP_OK;
  for (int j = 0; j < x->deg; j++) {
    sg_medge *e = &m->edge[x->adj[j]];
    int ko = m->node[sg_other(e, i)].k;
    int64_t *nc = sp_arena_alloc(m->arena, sizeof(int64_t) * (size_t)nk * (size_t)ko);
    if (!nc) { rc = SP_ENOMEM; break; }
    for (int k = 0; k < x->k; k++) {
      if (!keep[k]) continue;
      for (int o = 0; o < ko; o++)
        nc[e->a == i ? (int64_t)map[k] * ko + o : (int64_t)o * nk + map[k]] =
            e->a == i ? e->c[(int64_t)k * ko + o] : e->c[(int64_t)o * x->k + k];
    }
    e->c = nc;
  }
  x->k = nk;
  free(map);
  return rc;
}

/* A copy of `use` (k entries) plus `add` (or nothing when add is NULL), in the arena. */
static int64_t *vec_sum(sp_arena *a, const int64_t *use, const int64_t *add, int k) {
  int64_t *v = sp_arena_alloc(a, sizeof(int64_t) * (size_t)k);
  if (!v) return NULL;
  for (int j = 0; j < k; j++) v[j] = (use ? use[j] : 0) + (add ? add[j] : 0);
  return v;
}

int sp_sg_model_add_usage(sg_model *m, int i, int t0, int t1, const int64_t *use) {
  if (t0 >= t1) return SP_OK;
  sg_mnode *x = &m->node[i];
  int k = x->k;
  /* Segments [lo, hi) are those overlapping [t0, t1); the rest stay as they are. */
  int lo = 0, hi = x->nseg;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (x->seg[mid].t1 <= t0) lo = mid + 1; else hi = mid;
  }
  hi = lo;
  while (hi < x->nseg && x->seg[hi].t0 < t1) hi++;
  /* New pieces: at most 2 per overlapping segment (outside parts) plus the gaps. */
  int cap = 2 * (hi - lo) + (hi - lo) + 2, np = 0;
  sg_seg *piece = malloc(sizeof(sg_seg) * (size_t)cap);
  if (!piece) return SP_ENOMEM;
  int pos = t0;
  for (int s = lo; s < hi; s++) {
    const sg_seg *g = &x->seg[s];
    if (g->t0 < t0) /* the part before the new range keeps its old usage */
      piece[np++] = (sg_seg){g->t0, t0, vec_sum(m->arena, g->use, NULL, k)};
    if (pos < g->t0) /* a gap inside the new range */
      piece[np++] = (sg_seg){pos, g->t0, vec_sum(m->arena, NULL, use, k)};
    int a = g->t0 > t0 ? g->t0 : t0, b = g->t1 < t1 ? g->t1 : t1;
    piece[np++] = (sg_seg){a, b, vec_sum(m->arena, g->use, use, k)};
    if (g->t1 > t1) piece[np++] = (sg_seg){t1, g->t1, vec_sum(m->arena, g->use, NULL, k)};
    pos = b;
  }
  if (pos < t1) piece[np++] = (sg_seg){pos, t1, vec_sum(m->arena, NULL, use, k)};
  for (int j = 0; j < np; j++)
    if (!piece[j].use) { free(piece); return SP_ENOMEM; }
  /* Splice: replace segments [lo, hi) by the pieces. */
  int nseg = x->nseg - (hi - lo) + np;
  while (x->capseg < nseg)
    if (sp_arena_grow(m->arena, (void **)&x->seg, &x->capseg, x->capseg, sizeof(sg_seg))) {
      free(piece);
      return SP_ENOMEM;
    }
  memmove(&x->seg[lo + np], &x->seg[hi], sizeof(sg_seg) * (size_t)(x->nseg - hi));
  memcpy(&x->seg[lo], piece, sizeof(sg_seg) * (size_t)np);
  x->nseg = nseg;
  free(piece);
  /* Neighbouring pieces with equal usage become one (fewer segments, fewer checks). */
  int from = lo > 0 ? lo - 1 : 0, to = lo + np; /* last index that may merge with the next */
  for (int j = from; j < to && j + 1 < x->nseg;) {
    sg_seg *a = &x->seg[j], *b = &x->seg[j + 1];
    if (a->t1 == b->t0 && memcmp(a->use, b->use, sizeof(int64_t) * (size_t)k) == 0) {
      a->t1 = b->t1;
      memmove(b, b + 1, sizeof(sg_seg) * (size_t)(x->nseg - j - 2));
      x->nseg--;
      to--;
    } else {
      j++;
    }
  }
  return SP_OK;
}

int sp_sg_model_push_elim(sg_model *m, sg_elim rec) {
  if (sp_arena_grow(m->arena, (void **)&m->elim, &m->capelim, m->nelim, sizeof *m->elim))
    return SP_ENOMEM;
  m->elim[m->nelim++] = rec;
  return SP_OK;
}

void sp_sg_model_expand(const sg_model *m, const int *plan, int *out) {
  for (int i = 0; i < m->n; i++)
    out[i] = m->node[i].alive && plan[i] >= 0 && plan[i] < m->node[i].k
                 ? m->node[i].orig[plan[i]] : 0;
  for (int r = m->nelim - 1; r >= 0; r--) {
    const sg_elim *x = &m->elim[r];
    int v = x->fixed;
    if (x->kind == SG_ELIM_LEAF || x->kind == SG_ELIM_MERGED) v = x->resp[out[x->p]];
    else if (x->kind == SG_ELIM_SERIES) v = x->resp[(int64_t)out[x->p] * x->nq + out[x->q]];
    out[x->node] = v >= 0 ? v : 0;
  }
}

void sp_sg_model_restrict(const sg_model *m, const int *input, int *plan) {
  for (int i = 0; i < m->n; i++) {
    plan[i] = -1;
    if (!m->node[i].alive) continue;
    for (int k = 0; k < m->node[i].k; k++)
      if (m->node[i].orig[k] == input[i]) plan[i] = k;
  }
}

/* ------------------------------------------------------------------ compact form */

int sp_sg_prob_build(sg_model *m, sg_prob **out, sp_err *err) {
  sp_arena *a = m->arena;
  sg_prob *p = sp_arena_calloc(a, 1, sizeof *p);
  if (!p) goto oom;
  int *cid = sp_arena_alloc(a, sizeof(int) * ((size_t)m->n + 1));
  if (!cid) goto oom;
  int n = 0, ne = 0, nseg = 0;
  for (int i = 0; i < m->n; i++) {
    cid[i] = m->node[i].alive ? n++ : -1;
    if (m->node[i].alive) nseg += m->node[i].nseg;
  }
  for (int e = 0; e < m->m; e++) ne += m->edge[e].alive;
  p->n = n;
  p->m = ne;
  p->T = m->T;
  p->has_limit = m->has_limit;
  p->cap = m->cap;
  p->offset = m->offset;
  size_t nn = (size_t)n + 1, mm = (size_t)ne + 1;
  p->id = sp_arena_alloc(a, sizeof(int) * nn);
  p->k = sp_arena_alloc(a, sizeof(int) * nn);
  p->cost = sp_arena_alloc(a, sizeof(int64_t *) * nn);
  p->seg_off = sp_arena_calloc(a, nn + 1, sizeof(int));
  p->seg = sp_arena_alloc(a, sizeof(sg_seg) * ((size_t)nseg + 1));
  p->ea = sp_arena_alloc(a, sizeof(int) * mm);
  p->eb = sp_arena_alloc(a, sizeof(int) * mm);
  p->c = sp_arena_alloc(a, sizeof(int64_t *) * mm);
  p->ct = sp_arena_alloc(a, sizeof(int64_t *) * mm);
  p->adj_off = sp_arena_calloc(a, nn + 1, sizeof(int));
  p->adj_e = sp_arena_alloc(a, sizeof(int) * 2 * mm);
  p->adj_o = sp_arena_alloc(a, sizeof(int) * 2 * mm);
  if (!p->id || !p->k || !p->cost || !p->seg_off || !p->seg || !p->ea || !p->eb || !p->c ||
      !p->ct || !p->adj_off || !p->adj_e || !p->adj_o)
    goto oom;
  int s = 0;
  for (int i = 0; i < m->n; i++) {
    if (cid[i] < 0) continue;
    const sg_mnode *x = &m->node[i];
    int c = cid[i];
    p->id[c] = i;
    p->k[c] = x->k;
    p->cost[c] = x->cost;
    for (int j = 0; j < x->nseg; j++) p->seg[s++] = x->seg[j];
    p->seg_off[c + 1] = s;
  }
  p->seg_node = sp_arena_alloc(a, sizeof(int) * ((size_t)nseg + 1));
  if (!p->seg_node) goto oom;
  for (int i = 0; i < n; i++)
    for (int g = p->seg_off[i]; g < p->seg_off[i + 1]; g++) p->seg_node[g] = i;
  int ce = 0;
  for (int e = 0; e < m->m; e++) {
    const sg_medge *x = &m->edge[e];
    if (!x->alive) continue;
    int ka = m->node[x->a].k, kb = m->node[x->b].k;
    p->ea[ce] = cid[x->a];
    p->eb[ce] = cid[x->b];
    p->c[ce] = x->c;
    p->ct[ce] = sp_arena_alloc(a, sizeof(int64_t) * (size_t)ka * (size_t)kb);
    if (!p->ct[ce]) goto oom;
    for (int i = 0; i < ka; i++)
      for (int j = 0; j < kb; j++) p->ct[ce][(int64_t)j * ka + i] = x->c[(int64_t)i * kb + j];
    p->adj_off[cid[x->a] + 1]++;
    p->adj_off[cid[x->b] + 1]++;
    ce++;
  }
  for (int i = 0; i < n; i++) p->adj_off[i + 1] += p->adj_off[i];
  int *fill = calloc(nn, sizeof(int));
  if (!fill) goto oom;
  for (int e = 0; e < ne; e++) {
    int u = p->ea[e], v = p->eb[e];
    int pu = p->adj_off[u] + fill[u]++, pv = p->adj_off[v] + fill[v]++;
    p->adj_e[pu] = e; p->adj_o[pu] = v;
    p->adj_e[pv] = e; p->adj_o[pv] = u;
  }
  free(fill);
  *out = p;
  return SP_OK;
oom:
  return sp_err_set(err, SP_ENOMEM, "out of memory building the compact model");
}
