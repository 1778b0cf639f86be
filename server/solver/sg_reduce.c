/*
 * sg_reduce.c - exact reductions of a strategy-graph model (see sg_reduce_int.h).
 *
 * The memory rules sweep the compressed time axis with difference arrays; the strategy
 * rules (forbidden, arc consistency, dominance) run on "dirty" nodes only, i.e. nodes
 * whose costs, segments or incident matrices changed since they were last checked; the
 * bijective-edge merge looks at edges with a dirty end, between arc consistency (which makes
 * a "same strategy" edge square) and dominance (which sees more in the merged node); the
 * structural rules (fix, fold a leaf, replace a series node) drain a work queue, so a long
 * chain of leaves collapses in one pass. Every rule reports whether it changed the model
 * and the driver repeats them until none does.
 */
#include "solver/sg_reduce_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Series replacement work cap (strategy triples) and its size rule live here. */
#define SERIES_MAX_WORK ((int64_t)50 * 1000 * 1000)

typedef struct rctx {
  sg_model *m;
  sg_reduce_stats *st;
  uint8_t *dirty;     /* [n] strategy rules must look at this node again */
  int *queue;         /* [n] structural work queue (ring) */
  uint8_t *queued;    /* [n] */
  int qhead, qlen;
  int64_t *diff;      /* [T + 1] scratch */
  bool *keep;         /* [max k] scratch */
  int *perm;          /* [max k] scratch */
  int maxk;           /* strategy counts only shrink: bounds every k */
} rctx;

static void enqueue(rctx *c, int i) {
  if (c->queued[i]) return;
  c->queued[i] = 1;
  c->queue[(c->qhead + c->qlen++) % c->m->n] = i;
}

static int dequeue(rctx *c) {
  int i = c->queue[c->qhead];
  c->qhead = (c->qhead + 1) % c->m->n;
  c->qlen--;
  c->queued[i] = 0;
  return i;
}

/* Node i changed: it and its neighbours need the strategy and structural rules again. */
static void touch(rctx *c, int i) {
  sg_mnode *x = &c->m->node[i];
  c->dirty[i] = 1;
  enqueue(c, i);
  for (int j = 0; j < x->deg; j++) {
    int o = sg_other(&c->m->edge[x->adj[j]], i);
    c->dirty[o] = 1;
    enqueue(c, o);
  }
}

static int keep_strategies(rctx *c, int i, const bool *keep) {
  int before = c->m->node[i].k;
  int rc = sp_sg_model_keep(c->m, i, keep);
  if (rc == SP_OK && c->m->node[i].k != before) touch(c, i);
  return rc;
}

static void remove_segment(sg_mnode *x, int s) {
  memmove(&x->seg[s], &x->seg[s + 1], sizeof(sg_seg) * (size_t)(x->nseg - s - 1));
  x->nseg--;
}

static void set_infeasible(sg_model *m, const char *why) {
  if (m->infeasible) return;
  m->infeasible = true;
  snprintf(m->why, sizeof m->why, "%s", why);
}

/* ------------------------------------------------------------------ memory rules */

/* Moves each segment's least usage into the base; drops segments left all zero. */
static bool normalize_memory(rctx *c) {
  sg_model *m = c->m;
  bool changed = false;
  memset(c->diff, 0, sizeof(int64_t) * ((size_t)m->T + 1));
  for (int i = 0; i < m->n; i++) {
    sg_mnode *x = &m->node[i];
    if (!x->alive) continue;
    for (int s = 0; s < x->nseg; s++) {
      sg_seg *g = &x->seg[s];
      int64_t mn = g->use[0], mx = g->use[0];
      for (int k = 1; k < x->k; k++) {
        if (g->use[k] < mn) mn = g->use[k];
        if (g->use[k] > mx) mx = g->use[k];
      }
      if (mn > 0) {
        for (int k = 0; k < x->k; k++) g->use[k] -= mn;
        c->diff[g->t0] += mn;
        c->diff[g->t1] -= mn;
        changed = true;
      }
      if (mx == mn) {
        remove_segment(x, s--);
        c->st->segments_dropped++;
        touch(c, i);
        changed = true;
      }
    }
  }
  int64_t run = 0;
  for (int t = 0; t < m->T; t++) {
    run += c->diff[t];
    m->cap[t] -= run;
    if (m->cap[t] < 0) {
      char why[160];
      snprintf(why, sizeof why, "at time %lld the least possible usage exceeds the limit by "
               "%lld", (long long)m->times[t], (long long)-m->cap[t]);
      set_infeasible(m, why);
    }
  }
  return changed;
}

/* Drops segments that only cover times where the largest possible usage fits. */
static int drop_nonbinding(rctx *c, bool *changed) {
  sg_model *m = c->m;
  int *pb = malloc(sizeof(int) * ((size_t)m->T + 1));
  if (!pb) return SP_ENOMEM;
  memset(c->diff, 0, sizeof(int64_t) * ((size_t)m->T + 1));
  for (int i = 0; i < m->n; i++) {
    sg_mnode *x = &m->node[i];
    if (!x->alive) continue;
    for (int s = 0; s < x->nseg; s++) {
      int64_t mx = 0;
      for (int k = 0; k < x->k; k++) if (x->seg[s].use[k] > mx) mx = x->seg[s].use[k];
      c->diff[x->seg[s].t0] += mx;
      c->diff[x->seg[s].t1] -= mx;
    }
  }
  int64_t run = 0;
  pb[0] = 0;
  for (int t = 0; t < m->T; t++) {
    run += c->diff[t];
    pb[t + 1] = pb[t] + (m->has_limit && run > m->cap[t]);
  }
  for (int i = 0; i < m->n; i++) {
    sg_mnode *x = &m->node[i];
    if (!x->alive) continue;
    for (int s = 0; s < x->nseg; s++)
      if (pb[x->seg[s].t1] == pb[x->seg[s].t0]) {
        remove_segment(x, s--);
        c->st->segments_dropped++;
        touch(c, i);
        *changed = true;
      }
  }
  free(pb);
  return SP_OK;
}

/* Range minimum over cap[] with a sparse table. */
typedef struct rmq {
  int levels, n;
  int64_t *t; /* [levels][n] */
} rmq;

static int rmq_build(rmq *r, const int64_t *v, int n) {
  r->n = n;
  r->levels = 1;
  while ((1 << r->levels) <= n) r->levels++;
  r->t = malloc(sizeof(int64_t) * (size_t)r->levels * ((size_t)n + 1));
  if (!r->t) return SP_ENOMEM;
  memcpy(r->t, v, sizeof(int64_t) * (size_t)n);
  for (int l = 1; l < r->levels; l++) {
    int64_t *prev = r->t + (size_t)(l - 1) * (size_t)n, *cur = r->t + (size_t)l * (size_t)n;
    for (int i = 0; i + (1 << l) <= n; i++) {
      int64_t x = prev[i], y = prev[i + (1 << (l - 1))];
      cur[i] = x < y ? x : y;
    }
  }
  return SP_OK;
}

static int64_t rmq_min(const rmq *r, int lo, int hi) { /* [lo, hi), lo < hi */
  int l = 0;
  while ((2 << l) <= hi - lo) l++;
  const int64_t *row = r->t + (size_t)l * (size_t)r->n;
  int64_t x = row[lo], y = row[hi - (1 << l)];
  return x < y ? x : y;
}

/* Removes strategies whose usage alone exceeds the capacity somewhere in a segment. */
static int prune_memory_infeasible(rctx *c, bool *changed) {
  sg_model *m = c->m;
  if (!m->has_limit || m->T == 0) return SP_OK;
  rmq r;
  if (rmq_build(&r, m->cap, m->T) != SP_OK) return SP_ENOMEM;
  int rc = SP_OK;
  for (int i = 0; i < m->n && rc == SP_OK; i++) {
    sg_mnode *x = &m->node[i];
    if (!x->alive || x->nseg == 0) continue;
    bool any = false;
    for (int k = 0; k < x->k; k++) c->keep[k] = true;
    for (int s = 0; s < x->nseg; s++) {
      int64_t mc = rmq_min(&r, x->seg[s].t0, x->seg[s].t1);
      for (int k = 0; k < x->k; k++)
        if (x->seg[s].use[k] > mc) {
          c->keep[k] = false;
          any = true;
        }
    }
    if (!any) continue;
    for (int k = 0; k < x->k; k++) c->st->memory_pruned += !c->keep[k];
    rc = keep_strategies(c, i, c->keep);
    *changed = true;
  }
  free(r.t);
  return rc;
}

/* ------------------------------------------------------------------ strategy rules */

/* Strategy k of node i has a finite cost and, on every edge, some allowed pair. */
static bool strategy_allowed(const sg_model *m, int i, int k) {
  const sg_mnode *x = &m->node[i];
  if (x->cost[k] >= SP_SG_FORBIDDEN) return false;
  for (int j = 0; j < x->deg; j++) {
    const sg_medge *e = &m->edge[x->adj[j]];
    int o = sg_other(e, i), ko = m->node[o].k;
    bool ok = false;
    for (int q = 0; q < ko && !ok; q++)
      ok = (e->a == i ? sg_edge_cost(m, e, k, q) : sg_edge_cost(m, e, q, k)) < SP_SG_FORBIDDEN;
    if (!ok) return false;
  }
  return true;
}

/* Whether strategy s2 of node i is at least as good as s everywhere; ties go to the lower
 * index so that of two identical strategies exactly one survives. */
static bool dominates(const sg_model *m, int i, int s2, int s) {
  const sg_mnode *x = &m->node[i];
  bool strict = false;
  if (x->cost[s2] > x->cost[s]) return false;
  strict |= x->cost[s2] < x->cost[s];
  for (int g = 0; g < x->nseg; g++) {
    if (x->seg[g].use[s2] > x->seg[g].use[s]) return false;
    strict |= x->seg[g].use[s2] < x->seg[g].use[s];
  }
  for (int j = 0; j < x->deg; j++) {
    const sg_medge *e = &m->edge[x->adj[j]];
    int ko = m->node[sg_other(e, i)].k;
    if (e->a == i) {
      const int64_t *r2 = e->c + (int64_t)s2 * ko, *r = e->c + (int64_t)s * ko;
      for (int q = 0; q < ko; q++) {
        if (r2[q] > r[q]) return false;
        strict |= r2[q] < r[q];
      }
    } else {
      for (int q = 0; q < ko; q++) {
        int64_t v2 = e->c[(int64_t)q * x->k + s2], v = e->c[(int64_t)q * x->k + s];
        if (v2 > v) return false;
        strict |= v2 < v;
      }
    }
  }
  return strict || s2 < s;
}

/* Fills c->keep with the allowed strategies of node i; returns whether any is not. */
static bool mark_allowed(rctx *c, int i) {
  bool any = false;
  for (int k = 0; k < c->m->node[i].k; k++) {
    c->keep[k] = strategy_allowed(c->m, i, k);
    if (!c->keep[k]) {
      any = true;
      c->st->forbidden_pruned++;
    }
  }
  return any;
}

/* Arc consistency alone, ahead of the merge: the nodes stay dirty for dominance. */
static int prune_forbidden(rctx *c, bool *changed) {
  sg_model *m = c->m;
  for (int i = 0; i < m->n && !m->infeasible; i++) {
    if (!m->node[i].alive || !c->dirty[i] || !mark_allowed(c, i)) continue;
    int rc = keep_strategies(c, i, c->keep);
    if (rc != SP_OK) return rc;
    *changed = true;
  }
  return SP_OK;
}

static int prune_strategies(rctx *c, bool *changed) {
  sg_model *m = c->m;
  for (int i = 0; i < m->n; i++) {
    sg_mnode *x = &m->node[i];
    if (!x->alive || !c->dirty[i]) continue;
    c->dirty[i] = 0;
    bool any = mark_allowed(c, i);
    for (int k = 0; k < x->k; k++) {
      if (!c->keep[k]) continue;
      for (int k2 = 0; k2 < x->k; k2++)
        if (k2 != k && c->keep[k2] && dominates(m, i, k2, k)) {
          c->keep[k] = false;
          c->st->dominated++;
          any = true;
          break;
        }
    }
    if (!any) continue;
    int rc = keep_strategies(c, i, c->keep);
    if (rc != SP_OK) return rc;
    *changed = true;
    if (m->infeasible) return SP_OK;
  }
  return SP_OK;
}

/* An edge whose cost is x(a) + y(b) moves into the node costs. */
static bool drop_separable(rctx *c) {
  sg_model *m = c->m;
  bool changed = false;
  for (int e = 0; e < m->m; e++) {
    sg_medge *x = &m->edge[e];
    if (!x->alive) continue;
    int ka = m->node[x->a].k, kb = m->node[x->b].k;
    const int64_t *v = x->c;
    bool sep = true;
    for (int i = 0; i < ka && sep; i++)
      for (int j = 0; j < kb && sep; j++) {
        int64_t a = v[(int64_t)i * kb + j];
        if (a >= SP_SG_FORBIDDEN || a + v[0] != v[(int64_t)i * kb] + v[j]) sep = false;
      }
    if (!sep) continue;
    /* cost(i, j) = (row(i) - rmin) + (col(j) - cmin) + (rmin + cmin - v00), each >= 0. */
    int64_t rmin = INT64_MAX, cmin = INT64_MAX;
    for (int i = 0; i < ka; i++) if (v[(int64_t)i * kb] < rmin) rmin = v[(int64_t)i * kb];
    for (int j = 0; j < kb; j++) if (v[j] < cmin) cmin = v[j];
    for (int i = 0; i < ka; i++)
      m->node[x->a].cost[i] = sg_add(m->node[x->a].cost[i], v[(int64_t)i * kb] - rmin);
    for (int j = 0; j < kb; j++)
      m->node[x->b].cost[j] = sg_add(m->node[x->b].cost[j], v[j] - cmin);
    m->offset = sg_add(m->offset, rmin + cmin - v[0]);
    int a = x->a, b = x->b;
    sp_sg_model_kill_edge(m, e);
    touch(c, a);
    touch(c, b);
    c->st->separable++;
    changed = true;
  }
  return changed;
}

/* ------------------------------------------------------------------ bijective edges */

/* Whether edge e allows exactly one pair per strategy of either end (both ends then have
 * the same count); fills perm[ka] with the strategy of e->b paired with ka. Single-strategy
 * ends are left to fixing, which needs no edge moved. */
static bool bijective(const sg_model *m, const sg_medge *e, int *perm, bool *taken) {
  int k = m->node[e->a].k;
  if (k < 2 || m->node[e->b].k != k) return false;
  for (int j = 0; j < k; j++) taken[j] = false;
  for (int i = 0; i < k; i++) {
    perm[i] = -1;
    const int64_t *row = e->c + (int64_t)i * k;
    for (int j = 0; j < k; j++) {
      if (row[j] >= SP_SG_FORBIDDEN) continue;
      if (perm[i] >= 0 || taken[j]) return false;
      perm[i] = j;
      taken[j] = true;
    }
    if (perm[i] < 0) return false;
  }
  return true;
}

/* Row ka of the matrix of node a's new edge to o: the row of b's strategy perm[ka] in f,
 * f being b's edge to o. */
static void permuted_rows(const sg_medge *f, int b, const int *perm, int k, int ko,
                          int64_t *out) {
  for (int i = 0; i < k; i++)
    for (int q = 0; q < ko; q++)
      out[(int64_t)i * ko + q] = f->a == b ? f->c[(int64_t)perm[i] * ko + q]
                                           : f->c[(int64_t)q * k + perm[i]];
}

/* Merges node b into node a through edge e, which pairs strategy i of a with perm[i] of b
 * and forbids everything else: b's strategy follows from a's, so its cost, the pair's cost
 * and its usage join a's under the permutation, and its other edges move to a with their
 * rows permuted (summed into an edge a already has to the same node). */
static int merge_edge(rctx *c, int e, const int *perm) {
  sg_model *m = c->m;
  int a = m->edge[e].a, b = m->edge[e].b;
  sg_mnode *x = &m->node[a], *y = &m->node[b];
  int k = x->k;
  const int64_t *pair = m->edge[e].c;
  for (int i = 0; i < k; i++)
    x->cost[i] = sg_add(x->cost[i], sg_add(y->cost[perm[i]], pair[(int64_t)i * k + perm[i]]));
  int nin = m->g->nodes[a].nstrat;
  int *resp = sp_arena_alloc(m->arena, sizeof(int) * (size_t)nin);
  int64_t *use = malloc(sizeof(int64_t) * (size_t)k);
  int *edges = malloc(sizeof(int) * ((size_t)y->deg + 1));
  int64_t *mat = malloc(sizeof(int64_t) * (size_t)k * (size_t)c->maxk);
  int rc = SP_OK;
  if (!resp || !use || !edges || !mat) { rc = SP_ENOMEM; goto out; }
  for (int q = 0; q < nin; q++) resp[q] = -1;
  for (int i = 0; i < k; i++) resp[x->orig[i]] = y->orig[perm[i]];
  for (int s = 0; s < y->nseg && rc == SP_OK; s++) {
    for (int i = 0; i < k; i++) use[i] = y->seg[s].use[perm[i]];
    rc = sp_sg_model_add_usage(m, a, y->seg[s].t0, y->seg[s].t1, use);
  }
  if (rc != SP_OK) goto out;
  sp_sg_model_kill_edge(m, e);
  /* Killing and adding edges edits b's adjacency and may move the edge array: work from a
   * copy of the list and re-read each edge by index. */
  int deg = y->deg;
  memcpy(edges, y->adj, sizeof(int) * (size_t)deg);
  for (int j = 0; j < deg && rc == SP_OK; j++) {
    const sg_medge *f = &m->edge[edges[j]];
    int o = sg_other(f, b), ko = m->node[o].k;
    if (o == a) {
      /* A second edge between a and b (the model sums parallel edges, so this is defensive):
       * only its pairs on the permutation can be chosen, a cost of a alone. */
      for (int i = 0; i < k; i++)
        x->cost[i] = sg_add(x->cost[i], f->a == a ? f->c[(int64_t)i * k + perm[i]]
                                                  : f->c[(int64_t)perm[i] * k + i]);
      sp_sg_model_kill_edge(m, edges[j]);
      continue;
    }
    permuted_rows(f, b, perm, k, ko, mat);
    sp_sg_model_kill_edge(m, edges[j]);
    rc = sp_sg_model_add_edge(m, a, o, mat);
  }
  if (rc != SP_OK) goto out;
  sg_elim rec = {.kind = SG_ELIM_MERGED, .node = b, .p = a, .q = -1, .resp = resp};
  rc = sp_sg_model_push_elim(m, rec);
  sp_sg_model_kill_node(m, b);
  touch(c, a);
  c->st->merged++;
out:
  free(use);
  free(edges);
  free(mat);
  return rc;
}

/* Merges the ends of every bijective edge. Only edges with a dirty end can have become
 * bijective since the last look: every change of a strategy list or a matrix touches the
 * nodes it concerns. Edges appended by a merge are seen in the same sweep. */
static int merge_bijective(rctx *c, bool *changed) {
  sg_model *m = c->m;
  for (int e = 0; e < m->m && !m->infeasible; e++) {
    const sg_medge *x = &m->edge[e];
    if (!x->alive || (!c->dirty[x->a] && !c->dirty[x->b])) continue;
    if (!bijective(m, x, c->perm, c->keep)) continue;
    int rc = merge_edge(c, e, c->perm);
    if (rc != SP_OK) return rc;
    *changed = true;
  }
  return SP_OK;
}

/* ------------------------------------------------------------------ structural rules */

static int fix_node(rctx *c, int i, int k) {
  sg_model *m = c->m;
  sg_mnode *x = &m->node[i];
  if (x->cost[k] >= SP_SG_FORBIDDEN) { /* its only choice is forbidden */
    char why[160];
    snprintf(why, sizeof why, "node %d has no allowed strategy left", i);
    set_infeasible(m, why);
    return SP_OK;
  }
  m->offset = sg_add(m->offset, x->cost[k]);
  for (int j = 0; j < x->deg; j++) {
    const sg_medge *e = &m->edge[x->adj[j]];
    int o = sg_other(e, i);
    sg_mnode *y = &m->node[o];
    for (int q = 0; q < y->k; q++)
      y->cost[q] = sg_add(y->cost[q], e->a == i ? sg_edge_cost(m, e, k, q)
                                                : sg_edge_cost(m, e, q, k));
  }
  for (int s = 0; s < x->nseg; s++) /* its usage is now certain: move it to the base */
    for (int t = x->seg[s].t0; t < x->seg[s].t1; t++) {
      m->cap[t] -= x->seg[s].use[k];
      if (m->cap[t] < 0) set_infeasible(m, "a fixed choice exceeds the usage limit");
    }
  sg_elim rec = {.kind = SG_ELIM_FIXED, .node = i, .p = -1, .q = -1, .fixed = x->orig[k]};
  int rc = sp_sg_model_push_elim(m, rec);
  touch(c, i);
  sp_sg_model_kill_node(m, i);
  c->st->fixed++;
  return rc;
}

/* Whether strategy r of node x uses, in every segment, no more than any strategy k with
 * allowed[k] (all strategies when allowed is NULL). */
static bool least_usage(const sg_mnode *x, int r, const bool *allowed) {
  for (int s = 0; s < x->nseg; s++)
    for (int k = 0; k < x->k; k++)
      if ((!allowed || allowed[k]) && x->seg[s].use[k] < x->seg[s].use[r]) return false;
  return true;
}

/* Folds leaf f into its only neighbour when its cheapest responses use the least memory.
 * Sets *done when it did. */
static int fold_leaf(rctx *c, int f, bool *done) {
  sg_model *m = c->m;
  sg_mnode *x = &m->node[f];
  int e = x->adj[0];
  const sg_medge *ed = &m->edge[e];
  int p = sg_other(ed, f);
  sg_mnode *y = &m->node[p];
  int kp = y->k, kf = x->k;
  int *resp = malloc(sizeof(int) * (size_t)kp);
  int64_t *add = malloc(sizeof(int64_t) * (size_t)kp);
  int64_t *tot = malloc(sizeof(int64_t) * (size_t)kf);
  bool *allowed = malloc(sizeof(bool) * (size_t)kf);
  int rc = SP_OK;
  *done = false;
  if (!resp || !add || !tot || !allowed) { rc = SP_ENOMEM; goto out; }
  for (int sp = 0; sp < kp; sp++) {
    int64_t best = SP_SG_FORBIDDEN;
    for (int sf = 0; sf < kf; sf++) {
      tot[sf] = sg_add(x->cost[sf], ed->a == f ? sg_edge_cost(m, ed, sf, sp)
                                               : sg_edge_cost(m, ed, sp, sf));
      allowed[sf] = tot[sf] < SP_SG_FORBIDDEN;
      if (tot[sf] < best) best = tot[sf];
    }
    resp[sp] = -1;
    add[sp] = best;
    if (best >= SP_SG_FORBIDDEN) continue;
    /* Exact only if a cheapest response also uses the least memory among the responses
     * allowed here; otherwise memory could prefer a dearer one: keep the leaf. */
    for (int sf = 0; sf < kf && resp[sp] < 0; sf++)
      if (tot[sf] == best && least_usage(x, sf, allowed)) resp[sp] = sf;
    if (resp[sp] < 0) goto out;
  }
  int nin = m->g->nodes[p].nstrat;
  int *rec_resp = sp_arena_alloc(m->arena, sizeof(int) * (size_t)nin);
  int64_t *use = malloc(sizeof(int64_t) * (size_t)kp);
  if (!rec_resp || !use) { free(use); rc = SP_ENOMEM; goto out; }
  for (int k = 0; k < nin; k++) rec_resp[k] = -1;
  for (int sp = 0; sp < kp; sp++) {
    y->cost[sp] = sg_add(y->cost[sp], add[sp]);
    if (resp[sp] >= 0) rec_resp[y->orig[sp]] = x->orig[resp[sp]];
  }
  for (int s = 0; s < x->nseg && rc == SP_OK; s++) {
    for (int sp = 0; sp < kp; sp++) use[sp] = resp[sp] >= 0 ? x->seg[s].use[resp[sp]] : 0;
    rc = sp_sg_model_add_usage(m, p, x->seg[s].t0, x->seg[s].t1, use);
  }
  free(use);
  if (rc != SP_OK) goto out;
  sg_elim rec = {.kind = SG_ELIM_LEAF, .node = f, .p = p, .q = -1, .resp = rec_resp};
  rc = sp_sg_model_push_elim(m, rec);
  touch(c, f);
  sp_sg_model_kill_node(m, f);
  touch(c, p);
  c->st->leaves++;
  *done = true;
out:
  free(resp);
  free(add);
  free(tot);
  free(allowed);
  return rc;
}

/* Replaces node s, whose two neighbours are a and b, by an edge a-b when its cheapest
 * response to every pair also uses the least memory, and the new edge is not much larger
 * than what it replaces. */
static int fold_series(rctx *c, int s, bool *done) {
  sg_model *m = c->m;
  sg_mnode *x = &m->node[s];
  const sg_medge *e1 = &m->edge[x->adj[0]], *e2 = &m->edge[x->adj[1]];
  int a = sg_other(e1, s), b = sg_other(e2, s);
  int ka = m->node[a].k, kb = m->node[b].k, ks = x->k;
  *done = false;
  int64_t pairs = (int64_t)ka * kb;
  bool exists = false;
  for (int j = 0; j < m->node[a].deg; j++)
    if (sg_other(&m->edge[m->node[a].adj[j]], a) == b) exists = true;
  if (pairs > SP_SG_MAX_PAIRS || pairs * ks > SERIES_MAX_WORK) return SP_OK;
  if (!exists && pairs > (int64_t)ks * (ka + kb + 1)) return SP_OK;
  bool *least = malloc(sizeof(bool) * (size_t)ks);
  int64_t *mat = malloc(sizeof(int64_t) * (size_t)pairs);
  int *resp = malloc(sizeof(int) * (size_t)pairs);
  int64_t *rowa = malloc(sizeof(int64_t) * (size_t)ks);
  int rc = SP_OK;
  if (!least || !mat || !resp || !rowa) { rc = SP_ENOMEM; goto out; }
  for (int k = 0; k < ks; k++) least[k] = least_usage(x, k, NULL);
  for (int ia = 0; ia < ka; ia++) {
    for (int k = 0; k < ks; k++)
      rowa[k] = sg_add(x->cost[k], e1->a == s ? sg_edge_cost(m, e1, k, ia)
                                              : sg_edge_cost(m, e1, ia, k));
    for (int ib = 0; ib < kb; ib++) {
      int64_t best = SP_SG_FORBIDDEN;
      int r = -1;
      bool r_least = false;
      for (int k = 0; k < ks; k++) {
        int64_t t = sg_add(rowa[k], e2->a == s ? sg_edge_cost(m, e2, k, ib)
                                               : sg_edge_cost(m, e2, ib, k));
        if (t < best || (t == best && t < SP_SG_FORBIDDEN && least[k] && !r_least)) {
          best = t;
          r = k;
          r_least = least[k];
        }
      }
      if (r >= 0 && !r_least) goto out; /* memory could prefer a dearer response */
      mat[(int64_t)ia * kb + ib] = best;
      resp[(int64_t)ia * kb + ib] = r;
    }
  }
  /* Every response uses the least usage of each segment: a constant, moved to the base. */
  int kmin = -1;
  for (int k = 0; k < ks && kmin < 0; k++) if (least[k]) kmin = k;
  for (int g = 0; g < x->nseg && kmin >= 0; g++)
    for (int t = x->seg[g].t0; t < x->seg[g].t1; t++) m->cap[t] -= x->seg[g].use[kmin];
  int nina = m->g->nodes[a].nstrat, ninb = m->g->nodes[b].nstrat;
  int *rec_resp = sp_arena_alloc(m->arena, sizeof(int) * (size_t)nina * (size_t)ninb);
  if (!rec_resp) { rc = SP_ENOMEM; goto out; }
  for (int64_t q = 0; q < (int64_t)nina * ninb; q++) rec_resp[q] = -1;
  for (int ia = 0; ia < ka; ia++)
    for (int ib = 0; ib < kb; ib++) {
      int r = resp[(int64_t)ia * kb + ib];
      rec_resp[(int64_t)m->node[a].orig[ia] * ninb + m->node[b].orig[ib]] =
          r >= 0 ? x->orig[r] : -1;
    }
  sg_elim rec = {.kind = SG_ELIM_SERIES, .node = s, .p = a, .q = b, .nq = ninb,
                 .resp = rec_resp};
  if ((rc = sp_sg_model_push_elim(m, rec)) != SP_OK) goto out;
  touch(c, s);
  sp_sg_model_kill_node(m, s);
  rc = sp_sg_model_add_edge(m, a, b, mat);
  touch(c, a);
  touch(c, b);
  c->st->series++;
  *done = true;
out:
  free(least);
  free(mat);
  free(resp);
  free(rowa);
  return rc;
}

static int structural(rctx *c, bool *changed) {
  sg_model *m = c->m;
  while (c->qlen > 0 && !m->infeasible) {
    int i = dequeue(c);
    sg_mnode *x = &m->node[i];
    if (!x->alive) continue;
    int rc = SP_OK;
    bool done = false;
    if (x->k == 1) {
      rc = fix_node(c, i, 0);
      done = true;
    } else if (x->deg == 0 && x->nseg == 0) {
      int best = 0;
      for (int k = 1; k < x->k; k++) if (x->cost[k] < x->cost[best]) best = k;
      rc = fix_node(c, i, best);
      done = true;
    } else if (x->deg == 1) {
      rc = fold_leaf(c, i, &done);
    } else if (x->deg == 2) {
      rc = fold_series(c, i, &done);
    }
    if (rc != SP_OK) return rc;
    *changed |= done;
  }
  return SP_OK;
}

/* ------------------------------------------------------------------ driver */

int sp_sg_reduce(sg_model *m, sg_reduce_stats *st, sp_err *err) {
  sg_reduce_stats local;
  if (!st) st = &local;
  memset(st, 0, sizeof *st);
  if (m->infeasible || m->n == 0) return SP_OK;
  rctx c = {.m = m, .st = st};
  int maxk = 1;
  for (int i = 0; i < m->n; i++) if (m->node[i].k > maxk) maxk = m->node[i].k;
  c.dirty = malloc((size_t)m->n);
  c.queue = malloc(sizeof(int) * (size_t)m->n);
  c.queued = calloc((size_t)m->n, 1);
  c.diff = malloc(sizeof(int64_t) * ((size_t)m->T + 1));
  c.keep = malloc(sizeof(bool) * (size_t)maxk);
  c.perm = malloc(sizeof(int) * (size_t)maxk);
  c.maxk = maxk;
  int rc = SP_OK;
  if (!c.dirty || !c.queue || !c.queued || !c.diff || !c.keep || !c.perm) {
    rc = SP_ENOMEM;
    goto done;
  }
  memset(c.dirty, 1, (size_t)m->n);
  for (int i = 0; i < m->n; i++) if (m->node[i].alive) enqueue(&c, i);
  if (!m->has_limit)
    for (int i = 0; i < m->n; i++) m->node[i].nseg = 0; /* no limit: memory is irrelevant */
  bool changed = true;
  while (changed && !m->infeasible && rc == SP_OK) {
    changed = false;
    st->passes++;
    changed |= normalize_memory(&c);
    if (m->infeasible) break;
    if ((rc = drop_nonbinding(&c, &changed)) != SP_OK) break;
    if ((rc = prune_memory_infeasible(&c, &changed)) != SP_OK || m->infeasible) break;
    if ((rc = prune_forbidden(&c, &changed)) != SP_OK || m->infeasible) break;
    if ((rc = merge_bijective(&c, &changed)) != SP_OK || m->infeasible) break;
    if ((rc = prune_strategies(&c, &changed)) != SP_OK || m->infeasible) break;
    changed |= drop_separable(&c);
    if ((rc = structural(&c, &changed)) != SP_OK) break;
  }
  if (rc == SP_OK && m->offset >= SP_SG_FORBIDDEN) set_infeasible(m, "every plan uses a forbidden cost");
done:
  free(c.dirty);
  free(c.queue);
  free(c.queued);
  free(c.diff);
  free(c.keep);
  free(c.perm);
  if (rc != SP_OK) return sp_err_set(err, rc, "out of memory reducing the model");
  return SP_OK;
}

/* ------------------------------------------------------------------ components */

static int uf_find(int *par, int x) {
  while (par[x] != x) {
    par[x] = par[par[x]];
    x = par[x];
  }
  return x;
}

static void uf_union(int *par, int x, int y) {
  x = uf_find(par, x);
  y = uf_find(par, y);
  if (x != y) par[x < y ? y : x] = x < y ? x : y;
}

typedef struct seg_ref {
  int t0, t1, node;
} seg_ref;

static int cmp_seg_ref(const void *p, const void *q) {
  const seg_ref *x = p, *y = q;
  return (x->t0 > y->t0) - (x->t0 < y->t0);
}

int sp_sg_prob_components(const sg_prob *p, int *comp, int *ncomp) {
  int *par = malloc(sizeof(int) * ((size_t)p->n + 1));
  int ns = p->seg_off[p->n];
  seg_ref *segs = malloc(sizeof(seg_ref) * ((size_t)ns + 1));
  if (!par || !segs) { free(par); free(segs); return SP_ENOMEM; }
  for (int i = 0; i < p->n; i++) par[i] = i;
  for (int e = 0; e < p->m; e++) uf_union(par, p->ea[e], p->eb[e]);
  for (int i = 0; i < p->n; i++)
    for (int s = p->seg_off[i]; s < p->seg_off[i + 1]; s++)
      segs[s] = (seg_ref){p->seg[s].t0, p->seg[s].t1, i};
  qsort(segs, (size_t)ns, sizeof *segs, cmp_seg_ref);
  /* Overlapping segments form runs along time; each run is united. */
  int end = -1, rep = -1;
  for (int s = 0; s < ns; s++) {
    if (segs[s].t0 < end) {
      uf_union(par, rep, segs[s].node);
      if (segs[s].t1 > end) end = segs[s].t1;
    } else {
      rep = segs[s].node;
      end = segs[s].t1;
    }
  }
  int n = 0;
  for (int i = 0; i < p->n; i++) comp[i] = -1;
  for (int i = 0; i < p->n; i++) {
    int r = uf_find(par, i);
    if (comp[r] < 0) comp[r] = n++;
    comp[i] = comp[r];
  }
  *ncomp = n;
  free(par);
  free(segs);
  return SP_OK;
}
