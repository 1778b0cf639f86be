/*
 * sg_heuristic.c - greedy construction and local search (see sg_heuristic_int.h).
 *
 * Costs inside the search are summed in 128 bits: a forbidden entry counts 1e18, so a plan
 * that uses k of them costs about k * 1e18 and sums never overflow; the search therefore
 * prefers fewer forbidden entries without any special case, and a plan is usable only when
 * its total is below SP_SG_FORBIDDEN.
 *
 * Memory: a segment tree over compressed time holds load(t) - cap(t); a plan is valid when
 * its maximum is <= 0. Each node's segments are disjoint, so a one-node move is checked
 * segment by segment without touching the tree; joint moves are applied, checked and undone.
 */
#include "solver/sg_heuristic_int.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir/clock.h"
#include "ir/grow.h"

typedef __int128 wide;

#define WIDE_MAX ((wide)1 << 120)
#define CHECK_CLOCK_EVERY 4096 /* work units between deadline checks */
#define CHAIN_MAX 12           /* nodes of a path move */

struct sg_heur {
  const sg_prob *p;
  int n;
  int *cur;          /* current plan */
  wide cur_cost;
  int *best;         /* best valid plan */
  wide best_cost;
  bool has_best;
  /* usage: segment tree of load - cap, with pending adds */
  bool mem;
  int tsize;
  int64_t *mx, *ad;
  /* bookkeeping */
  uint64_t rng;
  int64_t work, next_clock;
  double deadline;
  const sp_run_ctl *ctl;  /* its cancel flag and moving deadline stop a phase too */
  void (*poll)(void *ctx);/* the solver's snapshot check, at the clock checks */
  void *poll_ctx;
  bool out_of_time;
  bool owe_plan;        /* the greedy has not produced a valid plan yet: the clock waits */
  sg_heur_cb cb;
  void *cb_ctx;
  const char *phase;
  /* scratch */
  int maxk;
  wide *lc, *lc2, *pair_a, *pair_b;
  int *order;
  int *jn, *js;       /* journal of (node, previous strategy) */
  int jlen, jcap;
  bool journaling;
  int *wl;            /* work list of nodes */
  uint8_t *inwl;
  int wlen;
  /* stabbing index: segments covering each tree node's whole range (CSR over tree nodes) */
  int *cov_off, *cov;
};

static uint64_t rnd(sg_heur *h) { /* xorshift64* */
  h->rng ^= h->rng >> 12;
  h->rng ^= h->rng << 25;
  h->rng ^= h->rng >> 27;
  return h->rng * 2685821657736338717ULL;
}

static int rnd_below(sg_heur *h, int n) { return (int)(rnd(h) % (uint64_t)n); }

/* Charges work and reports whether the phase must stop (budget spent or deadline passed). */
static bool spend(sg_heur *h, int64_t units, int64_t limit) {
  h->work += units;
  if (h->work >= h->next_clock) {
    h->next_clock = h->work + CHECK_CLOCK_EVERY;
    /* A time-out must still return a plan, so the deadline does not cut the construction of
     * the first one (ASan builds or a loaded machine can spend the whole budget reading). */
    bool waiting = h->owe_plan && !h->has_best;
    if (!waiting && ((h->deadline > 0 && sp_clock_now() >= h->deadline) ||
                     sp_run_ctl_stopped(h->ctl)))
      h->out_of_time = true;
    if (h->poll && h->has_best) h->poll(h->poll_ctx);
  }
  return h->out_of_time || h->work >= limit;
}

/* ------------------------------------------------------------------ usage tree */

static void st_add(sg_heur *h, int x, int nl, int nr, int lo, int hi, int64_t d) {
  if (hi <= nl || nr <= lo) return;
  if (lo <= nl && nr <= hi) {
    h->mx[x] += d;
    h->ad[x] += d;
    return;
  }
  int mid = (nl + nr) / 2;
  st_add(h, 2 * x, nl, mid, lo, hi, d);
  st_add(h, 2 * x + 1, mid, nr, lo, hi, d);
  int64_t l = h->mx[2 * x], r = h->mx[2 * x + 1];
  h->mx[x] = (l > r ? l : r) + h->ad[x];
}

static int64_t st_max(const sg_heur *h, int x, int nl, int nr, int lo, int hi) {
  if (hi <= nl || nr <= lo) return INT64_MIN / 2;
  if (lo <= nl && nr <= hi) return h->mx[x];
  int mid = (nl + nr) / 2;
  int64_t l = st_max(h, 2 * x, nl, mid, lo, hi), r = st_max(h, 2 * x + 1, mid, nr, lo, hi);
  return (l > r ? l : r) + h->ad[x];
}

static void st_build(sg_heur *h, int x, int nl, int nr) {
  h->ad[x] = 0;
  if (nr - nl == 1) {
    h->mx[x] = -h->p->cap[nl];
    return;
  }
  int mid = (nl + nr) / 2;
  st_build(h, 2 * x, nl, mid);
  st_build(h, 2 * x + 1, mid, nr);
  h->mx[x] = h->mx[2 * x] > h->mx[2 * x + 1] ? h->mx[2 * x] : h->mx[2 * x + 1];
}

/* Canonical decomposition of [lo, hi): counts (fill == NULL) or records segment g. */
static void cov_walk(sg_heur *h, int x, int nl, int nr, int lo, int hi, int g, int *fill) {
  if (hi <= nl || nr <= lo) return;
  if (lo <= nl && nr <= hi) {
    if (fill) h->cov[h->cov_off[x] + fill[x]++] = g;
    else h->cov_off[x + 1]++;
    return;
  }
  int mid = (nl + nr) / 2;
  cov_walk(h, 2 * x, nl, mid, lo, hi, g, fill);
  cov_walk(h, 2 * x + 1, mid, nr, lo, hi, g, fill);
}

/* Builds the index used to list the segments live at a time. */
static int cov_build(sg_heur *h) {
  const sg_prob *p = h->p;
  size_t nt = 4 * (size_t)h->tsize + 2;
  h->cov_off = calloc(nt + 1, sizeof(int));
  int *fill = calloc(nt, sizeof(int));
  if (!h->cov_off || !fill) { free(fill); return SP_ENOMEM; }
  int ns = p->seg_off[p->n];
  for (int g = 0; g < ns; g++) cov_walk(h, 1, 0, p->T, p->seg[g].t0, p->seg[g].t1, g, NULL);
  for (size_t x = 0; x < nt; x++) h->cov_off[x + 1] += h->cov_off[x];
  h->cov = malloc(sizeof(int) * ((size_t)h->cov_off[nt] + 1));
  if (!h->cov) { free(fill); return SP_ENOMEM; }
  for (int g = 0; g < ns; g++) cov_walk(h, 1, 0, p->T, p->seg[g].t0, p->seg[g].t1, g, fill);
  free(fill);
  return SP_OK;
}

static void usage_add(sg_heur *h, int i, int k, int sign) {
  if (!h->mem) return;
  const sg_prob *p = h->p;
  for (int s = p->seg_off[i]; s < p->seg_off[i + 1]; s++)
    if (p->seg[s].use[k])
      st_add(h, 1, 0, p->T, p->seg[s].t0, p->seg[s].t1, sign * p->seg[s].use[k]);
}

static bool plan_fits(const sg_heur *h) { return !h->mem || h->mx[1] <= 0; }

/* Whether moving node i from its strategy to k keeps every time within capacity. */
static bool move_fits(const sg_heur *h, int i, int k) {
  if (!h->mem) return true;
  const sg_prob *p = h->p;
  int c = h->cur[i];
  for (int s = p->seg_off[i]; s < p->seg_off[i + 1]; s++) {
    int64_t d = p->seg[s].use[k] - p->seg[s].use[c];
    if (d > 0 && st_max(h, 1, 0, p->T, p->seg[s].t0, p->seg[s].t1) + d > 0) return false;
  }
  return true;
}

/* After tentative moves: whether node i's segments are all within capacity. */
static bool node_fits_now(const sg_heur *h, int i) {
  if (!h->mem) return true;
  const sg_prob *p = h->p;
  for (int s = p->seg_off[i]; s < p->seg_off[i + 1]; s++)
    if (st_max(h, 1, 0, p->T, p->seg[s].t0, p->seg[s].t1) > 0) return false;
  return true;
}

/* ------------------------------------------------------------------ costs */

/* lc[k] = cost of node i under k plus its edges to the current neighbours, skipping the
 * edge `skip` (-1: none). */
static void local_costs(sg_heur *h, int i, int skip, wide *lc) {
  const sg_prob *p = h->p;
  int k = p->k[i];
  for (int s = 0; s < k; s++) lc[s] = p->cost[i][s];
  for (int a = p->adj_off[i]; a < p->adj_off[i + 1]; a++) {
    int e = p->adj_e[a];
    if (e == skip) continue;
    int o = p->adj_o[a];
    /* The column of e's matrix for the neighbour's strategy, read contiguously. */
    const int64_t *col = p->ea[e] == i ? p->ct[e] + (int64_t)h->cur[o] * k
                                       : p->c[e] + (int64_t)h->cur[o] * k;
    for (int s = 0; s < k; s++) lc[s] += col[s];
  }
  h->work += (int64_t)k * (p->adj_off[i + 1] - p->adj_off[i] + 1);
}

static int64_t edge_cost(const sg_prob *p, int e, int ka, int kb) {
  return p->c[e][(int64_t)ka * p->k[p->eb[e]] + kb];
}

static wide plan_cost(const sg_heur *h, const int *plan) {
  const sg_prob *p = h->p;
  wide c = 0;
  for (int i = 0; i < p->n; i++) c += p->cost[i][plan[i]];
  for (int e = 0; e < p->m; e++) c += edge_cost(p, e, plan[p->ea[e]], plan[p->eb[e]]);
  return c;
}

static void note_best(sg_heur *h) {
  if (h->cur_cost >= SP_SG_FORBIDDEN || !plan_fits(h)) return;
  if (h->has_best && h->cur_cost >= h->best_cost) return;
  memcpy(h->best, h->cur, sizeof(int) * (size_t)h->n);
  h->best_cost = h->cur_cost;
  h->has_best = true;
  if (h->cb) h->cb(h->cb_ctx, h->phase, (int64_t)h->best_cost);
}

static void wl_push(sg_heur *h, int i) {
  if (h->inwl[i]) return;
  h->inwl[i] = 1;
  h->wl[h->wlen++] = i;
}

static void wl_push_nbrs(sg_heur *h, int i) {
  const sg_prob *p = h->p;
  wl_push(h, i);
  for (int a = p->adj_off[i]; a < p->adj_off[i + 1]; a++) wl_push(h, p->adj_o[a]);
}

/* Sets node i to k, given lc = local_costs(i) (or NULL to compute the delta here). */
static void apply(sg_heur *h, int i, int k, const wide *lc) {
  int c = h->cur[i];
  if (c == k) return;
  if (!lc) {
    local_costs(h, i, -1, h->lc2);
    lc = h->lc2;
  }
  h->cur_cost += lc[k] - lc[c];
  usage_add(h, i, c, -1);
  usage_add(h, i, k, +1);
  h->cur[i] = k;
  if (h->journaling) {
    if (h->jlen == h->jcap) { /* two arrays of one capacity, grown to the same size */
      int cn = h->jcap, cs = h->jcap;
      if (sp_grow((void **)&h->jn, &cn, h->jlen, sizeof *h->jn) ||
          sp_grow((void **)&h->js, &cs, h->jlen, sizeof *h->js)) {
        h->journaling = false; /* cannot undo: keep it */
        return;
      }
      h->jcap = cn;
    }
    h->jn[h->jlen] = i;
    h->js[h->jlen++] = c;
  }
}

/* ------------------------------------------------------------------ setup */

int sp_sg_heur_new(const sg_prob *p, uint64_t seed, sg_heur **out) {
  sg_heur *h = calloc(1, sizeof *h);
  if (!h) return SP_ENOMEM;
  h->p = p;
  h->n = p->n;
  h->rng = seed ? seed : 0x9E3779B97F4A7C15ULL;
  h->maxk = 1;
  for (int i = 0; i < p->n; i++) if (p->k[i] > h->maxk) h->maxk = p->k[i];
  size_t nn = (size_t)p->n + 1, kk = (size_t)h->maxk + 1;
  h->cur = calloc(nn, sizeof(int));
  h->best = calloc(nn, sizeof(int));
  h->lc = malloc(sizeof(wide) * kk);
  h->lc2 = malloc(sizeof(wide) * kk);
  h->pair_a = malloc(sizeof(wide) * kk);
  h->pair_b = malloc(sizeof(wide) * kk);
  h->order = malloc(sizeof(int) * nn);
  h->wl = malloc(sizeof(int) * nn);
  h->inwl = calloc(nn, 1);
  h->mem = p->has_limit && p->T > 0 && p->seg_off[p->n] > 0;
  h->tsize = p->T > 0 ? p->T : 1;
  h->mx = malloc(sizeof(int64_t) * 4 * (size_t)h->tsize);
  h->ad = malloc(sizeof(int64_t) * 4 * (size_t)h->tsize);
  if (!h->cur || !h->best || !h->lc || !h->lc2 || !h->pair_a || !h->pair_b || !h->order ||
      !h->wl || !h->inwl || !h->mx || !h->ad) {
    sp_sg_heur_free(h);
    return SP_ENOMEM;
  }
  if (h->mem && cov_build(h) != SP_OK) {
    sp_sg_heur_free(h);
    return SP_ENOMEM;
  }
  h->phase = "greedy";
  *out = h;
  return SP_OK;
}

void sp_sg_heur_free(sg_heur *h) {
  if (!h) return;
  free(h->cur); free(h->best); free(h->lc); free(h->lc2); free(h->pair_a); free(h->pair_b);
  free(h->order); free(h->wl); free(h->inwl); free(h->mx); free(h->ad); free(h->jn);
  free(h->js); free(h->cov_off); free(h->cov);
  free(h);
}

void sp_sg_heur_set_callback(sg_heur *h, sg_heur_cb cb, void *ctx) {
  h->cb = cb;
  h->cb_ctx = ctx;
}

/* Makes `plan` the current plan (rebuilding the usage tree and the cost). */
static void load_plan(sg_heur *h, const int *plan) {
  memcpy(h->cur, plan, sizeof(int) * (size_t)h->n);
  if (h->mem) {
    st_build(h, 1, 0, h->p->T);
    for (int i = 0; i < h->n; i++) usage_add(h, i, h->cur[i], +1);
  }
  h->cur_cost = plan_cost(h, h->cur);
}

void sp_sg_heur_set_ctl(sg_heur *h, const sp_run_ctl *ctl) { h->ctl = ctl; }

void sp_sg_heur_set_poll(sg_heur *h, void (*poll)(void *ctx), void *ctx) {
  h->poll = poll;
  h->poll_ctx = ctx;
}

bool sp_sg_heur_seed(sg_heur *h, const int *plan) {
  h->phase = "warm start";
  return sp_sg_heur_offer(h, plan);
}

bool sp_sg_heur_offer(sg_heur *h, const int *plan) {
  for (int i = 0; i < h->n; i++)
    if (plan[i] < 0 || plan[i] >= h->p->k[i]) return false;
  int *saved = malloc(sizeof(int) * ((size_t)h->n + 1));
  if (!saved) return false;
  memcpy(saved, h->cur, sizeof(int) * (size_t)h->n);
  load_plan(h, plan);
  bool ok = plan_fits(h) && h->cur_cost < SP_SG_FORBIDDEN &&
            (!h->has_best || h->cur_cost < h->best_cost);
  if (ok) note_best(h);
  else load_plan(h, h->has_best ? h->best : saved);
  free(saved);
  return ok;
}

bool sp_sg_heur_has_plan(const sg_heur *h) { return h->has_best; }

const int *sp_sg_heur_best(const sg_heur *h, int64_t *cost) {
  if (cost) *cost = h->has_best ? (int64_t)h->best_cost : INT64_MAX;
  return h->has_best ? h->best : NULL;
}

int64_t sp_sg_heur_work(const sg_heur *h) { return h->work; }

/* ------------------------------------------------------------------ one-node moves */

/* The best strategy for node i that fits (its current one if none is better). */
static int best_single(sg_heur *h, int i, wide *gain) {
  local_costs(h, i, -1, h->lc);
  int c = h->cur[i], best = c;
  wide bc = h->lc[c];
  /* Try candidates cheapest first, stopping at the first that fits. */
  for (;;) {
    int cand = -1;
    wide cc = bc;
    for (int s = 0; s < h->p->k[i]; s++)
      if (h->lc[s] < cc) {
        cc = h->lc[s];
        cand = s;
      }
    if (cand < 0) break;
    if (move_fits(h, i, cand)) {
      best = cand;
      bc = cc;
      break;
    }
    h->lc[cand] = WIDE_MAX; /* does not fit: look at the next cheapest */
  }
  *gain = h->lc[c] - bc;
  if (best != c) local_costs(h, i, -1, h->lc); /* restore the entries marked above */
  return best;
}

/* Drains the work list with one-node moves. Returns whether anything improved. */
static bool descend_single(sg_heur *h, int64_t limit) {
  bool improved = false;
  while (h->wlen > 0) {
    int i = h->wl[--h->wlen];
    h->inwl[i] = 0;
    wide gain;
    int k = best_single(h, i, &gain);
    if (gain > 0 && k != h->cur[i]) {
      apply(h, i, k, h->lc);
      wl_push_nbrs(h, i);
      improved = true;
    }
    if (spend(h, 1, limit)) break;
  }
  return improved;
}

/* ------------------------------------------------------------------ pair moves */

typedef struct pair_cand {
  wide cost;
  int a, b;
} pair_cand;

static int cmp_pair(const void *x, const void *y) {
  const pair_cand *p = x, *q = y;
  return (p->cost > q->cost) - (p->cost < q->cost);
}

/* Re-optimises both ends of edge e jointly. Returns whether it improved. */
static bool pair_move(sg_heur *h, int e) {
  const sg_prob *p = h->p;
  int i = p->ea[e], j = p->eb[e], ki = p->k[i], kj = p->k[j];
  local_costs(h, i, e, h->pair_a);
  local_costs(h, j, e, h->pair_b);
  h->work += (int64_t)ki * kj;
  const int64_t *c = p->c[e];
  wide now = h->pair_a[h->cur[i]] + h->pair_b[h->cur[j]] + c[(int64_t)h->cur[i] * kj + h->cur[j]];
  int ncand = 0, cap = 64;
  pair_cand *cand = malloc(sizeof *cand * (size_t)cap);
  if (!cand) return false;
  for (int a = 0; a < ki; a++) {
    wide ra = h->pair_a[a];
    if (ra >= now) continue;
    for (int b = 0; b < kj; b++) {
      wide t = ra + h->pair_b[b] + c[(int64_t)a * kj + b];
      if (t >= now) continue;
      if (sp_grow((void **)&cand, &cap, ncand, sizeof *cand)) break;
      cand[ncand++] = (pair_cand){t, a, b};
    }
  }
  qsort(cand, (size_t)ncand, sizeof *cand, cmp_pair);
  bool done = false;
  int ci = h->cur[i], cj = h->cur[j];
  for (int q = 0; q < ncand && !done; q++) {
    int a = cand[q].a, b = cand[q].b;
    if (!h->mem) {
      done = true;
    } else {
      usage_add(h, i, ci, -1); usage_add(h, i, a, +1);
      usage_add(h, j, cj, -1); usage_add(h, j, b, +1);
      done = node_fits_now(h, i) && node_fits_now(h, j);
      usage_add(h, i, a, -1); usage_add(h, i, ci, +1);
      usage_add(h, j, b, -1); usage_add(h, j, cj, +1);
    }
    if (done) {
      apply(h, i, a, NULL);
      apply(h, j, b, NULL);
    }
    h->work += 8;
  }
  free(cand);
  return done;
}

/* ------------------------------------------------------------------ path moves */

/* A random induced path from node s (no edges between non-consecutive nodes). */
static int random_path(sg_heur *h, int s, int *path, int *pedge, uint8_t *mark) {
  const sg_prob *p = h->p;
  int len = 0;
  path[len++] = s;
  mark[s] = 1;
  while (len < CHAIN_MAX) {
    int v = path[len - 1], deg = p->adj_off[v + 1] - p->adj_off[v];
    if (deg == 0) break;
    int pick = -1, pe = -1;
    for (int tries = 0; tries < 4 && pick < 0; tries++) {
      int a = p->adj_off[v] + rnd_below(h, deg);
      int o = p->adj_o[a];
      if (mark[o]) continue;
      /* induced: o must not touch the path except at v */
      bool ok = true;
      for (int b = p->adj_off[o]; b < p->adj_off[o + 1] && ok; b++)
        if (mark[p->adj_o[b]] && p->adj_o[b] != v) ok = false;
      if (ok) { pick = o; pe = p->adj_e[a]; }
    }
    if (pick < 0) break;
    pedge[len - 1] = pe;
    path[len++] = pick;
    mark[pick] = 1;
  }
  for (int q = 0; q < len; q++) mark[path[q]] = 0;
  return len;
}

/* Re-optimises the nodes of an induced path exactly (Viterbi), keeping the rest fixed, then
 * checks memory for the whole change. Returns whether it improved. */
static bool path_move(sg_heur *h, const int *path, const int *pedge, int len) {
  const sg_prob *p = h->p;
  if (len < 2) return false;
  int maxk = h->maxk;
  wide *val = malloc(sizeof(wide) * (size_t)len * (size_t)maxk);
  wide *un = malloc(sizeof(wide) * (size_t)len * (size_t)maxk);
  int *arg = malloc(sizeof(int) * (size_t)len * (size_t)maxk);
  int *choice = malloc(sizeof(int) * (size_t)len);
  int *old = malloc(sizeof(int) * (size_t)len);
  bool improved = false;
  if (!val || !un || !arg || !choice || !old) goto out;
  /* Unary terms: own cost and edges to nodes off the path. */
  for (int q = 0; q < len; q++) {
    int v = path[q];
    wide *u = un + (size_t)q * maxk;
    int skip1 = q > 0 ? pedge[q - 1] : -1, skip2 = q + 1 < len ? pedge[q] : -1;
    local_costs(h, v, skip1, u);
    if (skip2 >= 0) { /* remove the other path edge's current contribution */
      int e = skip2, o = path[q + 1];
      for (int s = 0; s < p->k[v]; s++)
        u[s] -= p->ea[e] == v ? edge_cost(p, e, s, h->cur[o]) : edge_cost(p, e, h->cur[o], s);
    }
    for (int s = 0; s < p->k[v]; s++) /* strategies that cannot fit alone are out */
      if (s != h->cur[v] && !move_fits(h, v, s)) u[s] = WIDE_MAX;
    old[q] = h->cur[v];
  }
  wide now = 0;
  for (int q = 0; q < len; q++) now += un[(size_t)q * maxk + old[q]];
  for (int q = 0; q + 1 < len; q++) {
    int e = pedge[q];
    now += p->ea[e] == path[q] ? edge_cost(p, e, old[q], old[q + 1])
                               : edge_cost(p, e, old[q + 1], old[q]);
  }
  for (int s = 0; s < p->k[path[0]]; s++) val[s] = un[s];
  for (int q = 1; q < len; q++) {
    int v = path[q], w = path[q - 1], e = pedge[q - 1];
    for (int s = 0; s < p->k[v]; s++) {
      wide best = WIDE_MAX;
      int ba = 0;
      for (int r = 0; r < p->k[w]; r++) {
        wide pv = val[(size_t)(q - 1) * maxk + r];
        if (pv >= WIDE_MAX) continue;
        wide t = pv + (p->ea[e] == w ? edge_cost(p, e, r, s) : edge_cost(p, e, s, r));
        if (t < best) { best = t; ba = r; }
      }
      wide u = un[(size_t)q * maxk + s];
      val[(size_t)q * maxk + s] = best >= WIDE_MAX || u >= WIDE_MAX ? WIDE_MAX : best + u;
      arg[(size_t)q * maxk + s] = ba;
    }
    h->work += (int64_t)p->k[v] * p->k[w];
  }
  int last = path[len - 1], bs = -1;
  wide bv = now;
  for (int s = 0; s < p->k[last]; s++)
    if (val[(size_t)(len - 1) * maxk + s] < bv) { bv = val[(size_t)(len - 1) * maxk + s]; bs = s; }
  if (bs < 0) goto out;
  choice[len - 1] = bs;
  for (int q = len - 1; q > 0; q--) choice[q - 1] = arg[(size_t)q * maxk + choice[q]];
  bool fits = true;
  if (h->mem) {
    for (int q = 0; q < len; q++) { usage_add(h, path[q], old[q], -1); usage_add(h, path[q], choice[q], +1); }
    for (int q = 0; q < len && fits; q++) fits = node_fits_now(h, path[q]);
    for (int q = 0; q < len; q++) { usage_add(h, path[q], choice[q], -1); usage_add(h, path[q], old[q], +1); }
  }
  if (fits) {
    for (int q = 0; q < len; q++) apply(h, path[q], choice[q], NULL);
    improved = true;
  }
out:
  free(val); free(un); free(arg); free(choice); free(old);
  return improved;
}

/* ------------------------------------------------------------------ greedy */

static void push_all(sg_heur *h) {
  for (int i = h->n - 1; i >= 0; i--) wl_push(h, i);
}

/* The strategy of node i with the least total usage (cheapest among equals). */
static int least_usage_strategy(const sg_prob *p, int i) {
  int best = 0;
  int64_t bu = INT64_MAX, bc = INT64_MAX;
  for (int s = 0; s < p->k[i]; s++) {
    int64_t u = 0;
    for (int g = p->seg_off[i]; g < p->seg_off[i + 1]; g++)
      u += p->seg[g].use[s] * (int64_t)(p->seg[g].t1 - p->seg[g].t0);
    if (u < bu || (u == bu && p->cost[i][s] < bc)) { bu = u; bc = p->cost[i][s]; best = s; }
  }
  return best;
}

/* Whether moving node i to k keeps within capacity every segment except `skip` (which the
 * move relieves). */
static bool move_fits_elsewhere(const sg_heur *h, int i, int k, int skip) {
  const sg_prob *p = h->p;
  int c = h->cur[i];
  for (int s = p->seg_off[i]; s < p->seg_off[i + 1]; s++) {
    if (s == skip) continue;
    int64_t d = p->seg[s].use[k] - p->seg[s].use[c];
    if (d > 0 && st_max(h, 1, 0, p->T, p->seg[s].t0, p->seg[s].t1) + d > 0) return false;
  }
  return true;
}

/* The time with the largest overload (descending the tree). */
static int worst_time(const sg_heur *h) {
  int x = 1, nl = 0, nr = h->p->T;
  while (nr - nl > 1) {
    int mid = (nl + nr) / 2;
    if (h->mx[2 * x] >= h->mx[2 * x + 1]) { x = 2 * x; nr = mid; }
    else { x = 2 * x + 1; nl = mid; }
  }
  return nl;
}

/* Lowers usage where the plan overflows: at the most overloaded time, the move of a live
 * segment's node that frees usage there at the least cost per unit, among moves that do
 * not overload another time. */
static bool repair(sg_heur *h, int64_t limit) {
  const sg_prob *p = h->p;
  while (!plan_fits(h)) {
    int t = worst_time(h);
    int bi = -1, bk = -1;
    double bscore = 0;
    /* the segments live at t: those listed on the tree path to leaf t */
    int x = 1, nl = 0, nr = p->T;
    for (;;) {
      for (int c = h->cov_off[x]; c < h->cov_off[x + 1]; c++) {
        int g = h->cov[c], i = p->seg_node[g], cur = h->cur[i];
        bool have_lc = false;
        for (int s = 0; s < p->k[i]; s++) {
          int64_t freed = p->seg[g].use[cur] - p->seg[g].use[s];
          if (freed <= 0 || !move_fits_elsewhere(h, i, s, g)) continue;
          if (!have_lc) { local_costs(h, i, -1, h->lc); have_lc = true; }
          double score = (double)(h->lc[s] - h->lc[cur]) / (double)freed;
          if (bi < 0 || score < bscore) { bi = i; bk = s; bscore = score; }
        }
      }
      if (nr - nl == 1) break;
      int mid = (nl + nr) / 2;
      if (t < mid) { x = 2 * x; nr = mid; } else { x = 2 * x + 1; nl = mid; }
    }
    if (bi < 0 || spend(h, 1, limit)) return false;
    apply(h, bi, bk, NULL);
  }
  return true;
}

/* One pass of pair moves over the edges (each edge's best joint change of its two ends),
 * each success followed by single-node descent around it; whether any move was made. */
static bool pair_moves(sg_heur *h, int64_t limit) {
  const sg_prob *p = h->p;
  bool moved = false;
  for (int e = 0; e < p->m && !spend(h, 1, limit); e++)
    if (pair_move(h, e)) {
      moved = true;
      wl_push_nbrs(h, p->ea[e]);
      wl_push_nbrs(h, p->eb[e]);
      descend_single(h, limit);
    }
  return moved;
}

/* From the current plan (valid or not): repair, then one-node and pair moves until neither
 * helps; records the result if it is the best. */
static bool settle(sg_heur *h, int64_t limit) {
  if (!repair(h, limit)) return false;
  bool improved = true;
  while (improved && !h->out_of_time && h->work < limit) {
    push_all(h);
    improved = descend_single(h, limit);
    if (pair_moves(h, limit)) improved = true;
    note_best(h); /* from the first valid plan on, the deadline applies again */
  }
  h->wlen = 0;
  memset(h->inwl, 0, (size_t)h->n);
  note_best(h);
  return true;
}

int sp_sg_heur_greedy(sg_heur *h, double deadline) {
  const sg_prob *p = h->p;
  h->deadline = deadline;
  h->out_of_time = false;
  h->phase = "greedy";
  for (int i = 0; i < p->n; i++) h->order[i] = least_usage_strategy(p, i);
  load_plan(h, h->order);
  /* The least-usage plan fits (unless segments disagree on their least strategy) but may
   * use forbidden pairs and is dear: moves that never break the limit fix both. */
  h->owe_plan = true;
  settle(h, INT64_MAX);
  h->owe_plan = false;
  return h->has_best ? SP_OK : SP_ENOTFOUND;
}

int64_t sp_sg_heur_from_plan(sg_heur *h, const int *plan, int64_t work, double deadline) {
  h->deadline = deadline;
  h->out_of_time = false;
  h->phase = "lagrange";
  load_plan(h, plan);
  settle(h, h->work + work);
  if (h->has_best) load_plan(h, h->best);
  return h->has_best ? (int64_t)h->best_cost : INT64_MAX;
}

/* ------------------------------------------------------------------ descent */


void sp_sg_heur_descend(sg_heur *h, int64_t work, double deadline) {
  const sg_prob *p = h->p;
  h->deadline = deadline;
  h->out_of_time = false;
  int64_t limit = h->work + work;
  h->phase = "local search";
  if (!h->has_best) return;
  load_plan(h, h->best);
  uint8_t *mark = calloc((size_t)h->n + 1, 1);
  int *path = malloc(sizeof(int) * CHAIN_MAX), *pedge = malloc(sizeof(int) * CHAIN_MAX);
  if (!mark || !path || !pedge) goto out;
  bool improved = true;
  while (improved && !spend(h, 0, limit)) {
    improved = false;
    push_all(h);
    improved |= descend_single(h, limit);
    note_best(h);
    if (pair_moves(h, limit)) improved = true;
    note_best(h);
    for (int s = 0; s < p->n && !spend(h, 1, limit); s++) {
      int len = random_path(h, s, path, pedge, mark);
      if (path_move(h, path, pedge, len)) {
        improved = true;
        for (int q = 0; q < len; q++) wl_push_nbrs(h, path[q]);
        descend_single(h, limit);
      }
    }
    note_best(h);
  }
out:
  free(mark);
  free(path);
  free(pedge);
}

/* ------------------------------------------------------------------ perturbation */

static void undo_journal(sg_heur *h) {
  bool was = h->journaling;
  h->journaling = false;
  while (h->jlen > 0) {
    h->jlen--;
    apply(h, h->jn[h->jlen], h->js[h->jlen], NULL);
  }
  h->journaling = was;
}

void sp_sg_heur_improve(sg_heur *h, int64_t work, double deadline) {
  const sg_prob *p = h->p;
  h->deadline = deadline;
  h->out_of_time = false;
  int64_t limit = h->work + work;
  if (!h->has_best || p->n == 0) return;
  h->phase = "perturb";
  load_plan(h, h->best);
  uint8_t *mark = calloc((size_t)h->n + 1, 1);
  int *path = malloc(sizeof(int) * CHAIN_MAX), *pedge = malloc(sizeof(int) * CHAIN_MAX);
  if (!mark || !path || !pedge) goto out;
  while (!spend(h, 1, limit)) {
    wide before = h->cur_cost;
    h->jlen = 0;
    h->journaling = true;
    /* Kick: a random node (and a random neighbour) to random strategies that fit. */
    int i = rnd_below(h, h->n);
    int kicks = 1 + rnd_below(h, 3);
    for (int q = 0; q < kicks; q++) {
      int s = rnd_below(h, p->k[i]);
      if (s != h->cur[i] && move_fits(h, i, s)) apply(h, i, s, NULL);
      wl_push_nbrs(h, i);
      int deg = p->adj_off[i + 1] - p->adj_off[i];
      if (deg == 0) break;
      i = p->adj_o[p->adj_off[i] + rnd_below(h, deg)];
    }
    descend_single(h, limit);
    int len = random_path(h, i, path, pedge, mark);
    if (path_move(h, path, pedge, len)) {
      for (int q = 0; q < len; q++) wl_push_nbrs(h, path[q]);
      descend_single(h, limit);
    }
    h->journaling = false;
    if (h->cur_cost > before) {
      undo_journal(h);
    } else {
      note_best(h);
    }
    h->wlen = 0;
    memset(h->inwl, 0, (size_t)h->n);
  }
out:
  h->journaling = false;
  h->jlen = 0;
  free(mark);
  free(path);
  free(pedge);
  if (h->has_best) load_plan(h, h->best);
}
