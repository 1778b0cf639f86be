/*
 * sg_dual.c - Lagrangian relaxation with message passing (see sg_dual_int.h).
 *
 * Messages: for edge e = (a, b), mA[e] (k(a) entries) is added to a's unary and subtracted
 * from the edge, mB[e] likewise for b. Any messages give the lower bound
 *     sum_i min_k (u_i(k) + sum_e m_e->i(k)) + sum_e min_{x,y} (C_e(x, y) - mA(x) - mB(y)).
 * TRW-S passes (forward and backward over the node order, each node weighted by
 * 1 / max(earlier neighbours, later neighbours)) make the labelling good quickly; sweeps
 * of MPLP edge updates (each edge block set to its best value) on a separate set of
 * messages raise the bound, which is read from those. MPLP messages start at zero and
 * carry information a few edges per sweep, so the bound keeps rising over many rounds even
 * when no price moves; rounds stop when it stops (or proves the best plan).
 *
 * Prices: lambda_r per usage row; a segment covers the rows whose time lies in it, a
 * contiguous range of the time-sorted rows, so its price is a difference of prefix sums.
 */
#include "solver/sg_dual_int.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/clock.h"
#include "solver/sg_heuristic_int.h"

#define BIG 1e30
#define FLAT_ROUNDS 5 /* rounds without a better bound (and no price move) before stopping */

struct sg_dual {
  const sg_prob *p;
  const sg_rows *rows;
  int n, maxk;
  int64_t *uoff;      /* [n + 1] offsets of node arrays */
  double *unary;      /* priced node costs */
  double *msg;        /* TRW-S messages: mA at aoff[e], mB at boff[e] */
  double *msg2;       /* MPLP messages (same layout), for the bound */
  double *best_msg2;  /* MPLP messages and prices of the best bound */
  double *best_lambda;
  int64_t nmsg;
  double best_bound;
  int64_t *aoff, *boff;
  double *gamma;      /* TRW-S node weights */
  double *lambda;     /* [rows] prices */
  double *prefix;     /* [rows + 1] */
  int *rlo, *rhi;     /* [segments] covered row range */
  double *th, *mtmp, *mtmp2; /* [maxk] scratch */
  int *labels, *best_labels;
  int64_t *load;      /* [T + 1] scratch */
  int64_t work;
};

static double *msg_to(sg_dual *d, double *msg, int e, int i) {
  return msg + (d->p->ea[e] == i ? d->aoff[e] : d->boff[e]);
}

int sp_sg_dual_new(const sg_prob *p, const sg_rows *rows, sg_dual **out) {
  sg_dual *d = calloc(1, sizeof *d);
  if (!d) return SP_ENOMEM;
  d->p = p;
  d->rows = rows;
  d->n = p->n;
  d->maxk = 1;
  size_t nn = (size_t)p->n + 1, nr = (size_t)rows->n + 1, ns = (size_t)p->seg_off[p->n] + 1;
  d->uoff = malloc(sizeof(int64_t) * (nn + 1));
  d->aoff = malloc(sizeof(int64_t) * ((size_t)p->m + 1));
  d->boff = malloc(sizeof(int64_t) * ((size_t)p->m + 1));
  d->gamma = malloc(sizeof(double) * nn);
  d->lambda = calloc(nr, sizeof(double));
  d->prefix = calloc(nr + 1, sizeof(double));
  d->rlo = malloc(sizeof(int) * ns);
  d->rhi = malloc(sizeof(int) * ns);
  d->labels = malloc(sizeof(int) * nn);
  d->best_labels = malloc(sizeof(int) * nn);
  d->load = malloc(sizeof(int64_t) * ((size_t)p->T + 2));
  if (!d->uoff || !d->aoff || !d->boff || !d->gamma || !d->lambda || !d->prefix || !d->rlo ||
      !d->rhi || !d->labels || !d->best_labels || !d->load)
    goto oom;
  d->uoff[0] = 0;
  for (int i = 0; i < p->n; i++) {
    d->uoff[i + 1] = d->uoff[i] + p->k[i];
    if (p->k[i] > d->maxk) d->maxk = p->k[i];
  }
  int64_t mo = 0;
  for (int e = 0; e < p->m; e++) {
    d->aoff[e] = mo;
    mo += p->k[p->ea[e]];
    d->boff[e] = mo;
    mo += p->k[p->eb[e]];
  }
  d->unary = malloc(sizeof(double) * ((size_t)d->uoff[p->n] + 1));
  d->nmsg = mo;
  d->msg = calloc((size_t)mo + 1, sizeof(double));
  d->msg2 = calloc((size_t)mo + 1, sizeof(double));
  d->best_msg2 = calloc((size_t)mo + 1, sizeof(double));
  d->best_lambda = calloc(nr, sizeof(double));
  d->best_bound = -HUGE_VAL;
  d->th = malloc(sizeof(double) * (size_t)d->maxk);
  d->mtmp = malloc(sizeof(double) * (size_t)d->maxk);
  d->mtmp2 = malloc(sizeof(double) * (size_t)d->maxk);
  if (!d->unary || !d->msg || !d->msg2 || !d->best_msg2 || !d->best_lambda || !d->th ||
      !d->mtmp || !d->mtmp2)
    goto oom;
  for (int i = 0; i < p->n; i++) {
    int lo = 0, hi = 0;
    for (int a = p->adj_off[i]; a < p->adj_off[i + 1]; a++) {
      if (p->adj_o[a] < i) lo++;
      else hi++;
    }
    int w = lo > hi ? lo : hi;
    d->gamma[i] = w > 0 ? 1.0 / w : 1.0;
  }
  /* Rows are sorted by time: a segment [t0, t1) covers rows [rlo, rhi). */
  for (int g = 0; g < p->seg_off[p->n]; g++) {
    int lo = 0, hi = rows->n;
    while (lo < hi) {
      int mid = (lo + hi) / 2;
      if (rows->t[mid] < p->seg[g].t0) lo = mid + 1; else hi = mid;
    }
    d->rlo[g] = lo;
    hi = rows->n;
    int l2 = lo;
    while (l2 < hi) {
      int mid = (l2 + hi) / 2;
      if (rows->t[mid] < p->seg[g].t1) l2 = mid + 1; else hi = mid;
    }
    d->rhi[g] = l2;
  }
  *out = d;
  return SP_OK;
oom:
  sp_sg_dual_free(d);
  return SP_ENOMEM;
}

void sp_sg_dual_free(sg_dual *d) {
  if (!d) return;
  free(d->uoff); free(d->aoff); free(d->boff); free(d->gamma); free(d->lambda);
  free(d->prefix); free(d->rlo); free(d->rhi); free(d->labels); free(d->best_labels);
  free(d->load); free(d->unary); free(d->msg); free(d->msg2); free(d->best_msg2);
  free(d->best_lambda); free(d->th); free(d->mtmp); free(d->mtmp2);
  free(d);
}

int64_t sp_sg_dual_work(const sg_dual *d) { return d->work; }

/* unary = cost + sum over segments of use * (sum of the prices of the rows it covers). */
static void price_unaries(sg_dual *d) {
  const sg_prob *p = d->p;
  d->prefix[0] = 0;
  for (int r = 0; r < d->rows->n; r++) d->prefix[r + 1] = d->prefix[r] + d->lambda[r];
  for (int i = 0; i < p->n; i++) {
    double *u = d->unary + d->uoff[i];
    for (int k = 0; k < p->k[i]; k++) u[k] = (double)p->cost[i][k];
    for (int g = p->seg_off[i]; g < p->seg_off[i + 1]; g++) {
      double price = d->prefix[d->rhi[g]] - d->prefix[d->rlo[g]];
      if (price == 0) continue;
      for (int k = 0; k < p->k[i]; k++) u[k] += price * (double)p->seg[g].use[k];
    }
  }
}

/* The row of C_e for strategy x of node i (entries over the other node's strategies). */
static const int64_t *cost_row(const sg_prob *p, int e, int i, int x) {
  return p->ea[e] == i ? p->c[e] + (int64_t)x * p->k[p->eb[e]]
                       : p->ct[e] + (int64_t)x * p->k[p->ea[e]];
}

/* th = unary of i plus every message into it. */
static void node_belief(sg_dual *d, double *msg, int i, double *th) {
  const sg_prob *p = d->p;
  const double *u = d->unary + d->uoff[i];
  for (int k = 0; k < p->k[i]; k++) th[k] = u[k];
  for (int a = p->adj_off[i]; a < p->adj_off[i + 1]; a++) {
    const double *m = msg_to(d, msg, p->adj_e[a], i);
    for (int k = 0; k < p->k[i]; k++) th[k] += m[k];
  }
}

/* One TRW-S pass; forward passes also decode a labelling into d->labels. */
static void trws_pass(sg_dual *d, bool forward) {
  const sg_prob *p = d->p;
  for (int step = 0; step < p->n; step++) {
    int i = forward ? step : p->n - 1 - step, ki = p->k[i];
    double *th = d->th;
    node_belief(d, d->msg, i, th);
    if (forward) { /* decode: earlier neighbours fixed, later ones through messages */
      double *lab = d->mtmp2;
      const double *u = d->unary + d->uoff[i];
      for (int k = 0; k < ki; k++) lab[k] = u[k];
      for (int a = p->adj_off[i]; a < p->adj_off[i + 1]; a++) {
        int e = p->adj_e[a], o = p->adj_o[a];
        if (o < i) {
          const int64_t *row = cost_row(p, e, o, d->labels[o]);
          for (int k = 0; k < ki; k++) lab[k] += (double)row[k];
        } else {
          const double *m = msg_to(d, d->msg, e, i);
          for (int k = 0; k < ki; k++) lab[k] += m[k];
        }
      }
      int best = 0;
      for (int k = 1; k < ki; k++) if (lab[k] < lab[best]) best = k;
      d->labels[i] = best;
    }
    double g = d->gamma[i];
    for (int a = p->adj_off[i]; a < p->adj_off[i + 1]; a++) {
      int e = p->adj_e[a], o = p->adj_o[a];
      if (forward ? o < i : o > i) continue;
      int ko = p->k[o];
      const double *back = msg_to(d, d->msg, e, i);
      double *out = msg_to(d, d->msg, e, o);
      for (int y = 0; y < ko; y++) out[y] = BIG;
      for (int x = 0; x < ki; x++) {
        double base = g * th[x] - back[x];
        const int64_t *row = cost_row(p, e, i, x);
        for (int y = 0; y < ko; y++) {
          double v = base + (double)row[y];
          if (v < out[y]) out[y] = v;
        }
      }
      double mn = out[0];
      for (int y = 1; y < ko; y++) if (out[y] < mn) mn = out[y];
      for (int y = 0; y < ko; y++) out[y] -= mn;
      d->work += (int64_t)ki * ko;
    }
  }
}

/* One sweep of MPLP edge updates: each edge's block of the bound set to its best value. */
static void mplp_sweep(sg_dual *d) {
  const sg_prob *p = d->p;
  double *A = d->th, *B = d->mtmp, *Mb = d->mtmp2;
  double *Ma = malloc(sizeof(double) * (size_t)d->maxk);
  if (!Ma) return;
  for (int e = 0; e < p->m; e++) {
    int a = p->ea[e], b = p->eb[e], ka = p->k[a], kb = p->k[b];
    double *ma = d->msg2 + d->aoff[e], *mb = d->msg2 + d->boff[e];
    node_belief(d, d->msg2, a, A);
    node_belief(d, d->msg2, b, B);
    for (int x = 0; x < ka; x++) A[x] -= ma[x];
    for (int y = 0; y < kb; y++) B[y] -= mb[y];
    for (int x = 0; x < ka; x++) Mb[x] = BIG;
    for (int y = 0; y < kb; y++) Ma[y] = BIG;
    for (int x = 0; x < ka; x++) {
      const int64_t *row = p->c[e] + (int64_t)x * kb;
      for (int y = 0; y < kb; y++) {
        double c = (double)row[y];
        if (c + B[y] < Mb[x]) Mb[x] = c + B[y];
        if (c + A[x] < Ma[y]) Ma[y] = c + A[x];
      }
    }
    for (int x = 0; x < ka; x++) ma[x] = 0.5 * (Mb[x] - A[x]);
    for (int y = 0; y < kb; y++) mb[y] = 0.5 * (Ma[y] - B[y]);
    d->work += 3 * (int64_t)ka * kb;
  }
  free(Ma);
}

/* The bound of the MPLP messages for the priced problem, minus `lcap` (sum lambda cap), less
 * a margin for the rounding of the double arithmetic. Each node term adds deg + 1 numbers,
 * each edge term three, and the bound sums n + m terms; the margin bounds those errors by
 * the magnitudes involved (largest message, largest priced cost of each node, the terms
 * themselves), so that it stays safe even when messages grow large (forbidden costs are
 * 1e18), and is negligible otherwise. */
static double messages_bound(sg_dual *d, double lcap) {
  const sg_prob *p = d->p;
  double lb = 0, terms = fabs(lcap), local = 0, maxmsg = 0;
  for (int64_t v = 0; v < d->nmsg; v++)
    if (fabs(d->msg2[v]) > maxmsg) maxmsg = fabs(d->msg2[v]);
  for (int i = 0; i < p->n; i++) {
    node_belief(d, d->msg2, i, d->th);
    const double *u = d->unary + d->uoff[i];
    double mn = d->th[0], umax = 0;
    for (int k = 1; k < p->k[i]; k++) if (d->th[k] < mn) mn = d->th[k];
    for (int k = 0; k < p->k[i]; k++) if (fabs(u[k]) > umax) umax = fabs(u[k]);
    int deg = p->adj_off[i + 1] - p->adj_off[i];
    lb += mn;
    terms += fabs(mn);
    local += (deg + 1) * (umax + deg * maxmsg);
  }
  for (int e = 0; e < p->m; e++) {
    int ka = p->k[p->ea[e]], kb = p->k[p->eb[e]];
    const double *ma = d->msg2 + d->aoff[e], *mb = d->msg2 + d->boff[e];
    double mn = BIG;
    for (int x = 0; x < ka; x++) {
      const int64_t *row = p->c[e] + (int64_t)x * kb;
      for (int y = 0; y < kb; y++) {
        double v = (double)row[y] - ma[x] - mb[y];
        if (v < mn) mn = v;
      }
    }
    lb += mn;
    terms += fabs(mn);
    local += 2 * (fabs(mn) + 4 * maxmsg);
    d->work += (int64_t)ka * kb;
  }
  lb -= lcap;
  double margin = 2 * DBL_EPSILON * ((double)(p->n + p->m + 1) * terms + local);
  return lb - margin - 1e-9 * fabs(lb) - 1e-6;
}

/* Row loads of a labelling, through a difference array over time. */
static void row_loads(sg_dual *d, const int *lab, double *g) {
  const sg_prob *p = d->p;
  memset(d->load, 0, sizeof(int64_t) * ((size_t)p->T + 2));
  for (int i = 0; i < p->n; i++)
    for (int s = p->seg_off[i]; s < p->seg_off[i + 1]; s++) {
      int64_t u = p->seg[s].use[lab[i]];
      d->load[p->seg[s].t0] += u;
      d->load[p->seg[s].t1] -= u;
    }
  int64_t run = 0;
  int r = 0;
  for (int t = 0; t < p->T && r < d->rows->n; t++) {
    run += d->load[t];
    while (r < d->rows->n && d->rows->t[r] == t) {
      g[r] = (double)(run - d->rows->cap[r]);
      r++;
    }
  }
}

/* One projected subgradient step on the prices, at the decoded labelling (Polyak's rule
 * against `ub`). Returns false when no price can move: the labelling fits every row and
 * the rows it leaves room in are free already. `stall` counts rounds without a better
 * bound; theta halves after four. */
static bool price_step(sg_dual *d, double lb, int64_t ub, double *g, double *last, int *stall,
                       double *theta) {
  int nr = d->rows->n;
  if (nr == 0) return false;
  row_loads(d, d->labels, g);
  double norm = 0;
  for (int r = 0; r < nr; r++) {
    if (d->lambda[r] <= 0 && g[r] < 0) g[r] = 0; /* projected: the price stays 0 */
    norm += g[r] * g[r];
  }
  if (norm == 0) return false;
  if (lb <= *last + 1e-9 * fabs(*last)) {
    if (++*stall >= 4) { *theta *= 0.5; *stall = 0; }
  } else {
    *stall = 0;
  }
  if (lb > *last) *last = lb;
  double target = ub < INT64_MAX ? (double)ub : lb + fabs(lb) * 0.1 + 1;
  double step = *theta * (target - lb) / norm;
  if (!(step > 0)) step = *theta * 1e-12;
  for (int r = 0; r < nr; r++) {
    d->lambda[r] += step * g[r];
    if (d->lambda[r] < 0) d->lambda[r] = 0;
  }
  return true;
}

double sp_sg_dual_run(sg_dual *d, int iters, int passes, double deadline,
                      sg_dual_primal_fn primal, void *ctx) {
  int nr = d->rows->n;
  double best = -HUGE_VAL, theta = 1.0;
  double *g = malloc(sizeof(double) * ((size_t)nr + 1));
  if (!g) return best;
  int stall = 0, flat = 0;
  double last = -HUGE_VAL, last_flat = -HUGE_VAL;
  for (int it = 0; it < iters; it++) {
    if (deadline > 0 && sp_clock_now() >= deadline) break;
    price_unaries(d);
    for (int q = 0; q < passes; q++) {
      trws_pass(d, true);
      trws_pass(d, false);
    }
    int64_t ub = primal ? primal(ctx, d->labels) : INT64_MAX;
    for (int q = 0; q < passes; q++) mplp_sweep(d);
    double lcap = 0;
    for (int r = 0; r < nr; r++) lcap += d->lambda[r] * (double)d->rows->cap[r];
    double lb = messages_bound(d, lcap);
    if (lb > best) best = lb;
    if (lb > d->best_bound) { /* remember this dual for pruning */
      d->best_bound = lb;
      memcpy(d->best_msg2, d->msg2, sizeof(double) * (size_t)d->nmsg);
      memcpy(d->best_lambda, d->lambda, sizeof(double) * (size_t)nr);
    }
    /* Costs are integers: a bound above ub - 1 proves the best plan optimal. */
    if (ub < INT64_MAX && best > (double)ub - 1) break;
    if (price_step(d, lb, ub, g, &last, &stall, &theta)) continue;
    /* No price moved: the messages alone can still raise the bound, often a lot (they
     * start from zero and each round passes them only a few times), so go on until they
     * stop paying. */
    if (last_flat == -HUGE_VAL || lb > last_flat + 1e-9 * fabs(last_flat) + 1e-6) {
      flat = 0;
      last_flat = lb;
    } else if (++flat >= FLAT_ROUNDS) {
      break;
    }
  }
  free(g);
  return best;
}

int sp_sg_dual_excess(sg_dual *d, sg_excess *ex) {
  const sg_prob *p = d->p;
  memset(ex, 0, sizeof *ex);
  if (d->best_bound == -HUGE_VAL) return SP_ENOTFOUND;
  ex->noff = malloc(sizeof(int64_t) * ((size_t)p->n + 1));
  ex->poff = malloc(sizeof(int64_t) * ((size_t)p->m + 1));
  if (!ex->noff || !ex->poff) goto oom;
  ex->noff[0] = 0;
  for (int i = 0; i < p->n; i++) ex->noff[i + 1] = ex->noff[i] + p->k[i];
  ex->poff[0] = 0;
  for (int e = 0; e < p->m; e++)
    ex->poff[e + 1] = ex->poff[e] + (int64_t)p->k[p->ea[e]] * p->k[p->eb[e]];
  ex->node = malloc(sizeof(double) * ((size_t)ex->noff[p->n] + 1));
  ex->pair = malloc(sizeof(double) * ((size_t)ex->poff[p->m] + 1));
  ex->nshare = calloc((size_t)p->n + 1, sizeof(double));
  ex->eshare = calloc((size_t)p->m + 1, sizeof(double));
  if (!ex->node || !ex->pair || !ex->nshare || !ex->eshare) goto oom;
  /* Restore the best dual (prices and messages), then read the excesses. */
  memcpy(d->lambda, d->best_lambda, sizeof(double) * (size_t)d->rows->n);
  memcpy(d->msg2, d->best_msg2, sizeof(double) * (size_t)d->nmsg);
  price_unaries(d);
  for (int i = 0; i < p->n; i++) {
    double *x = ex->node + ex->noff[i];
    node_belief(d, d->msg2, i, x);
    double mn = x[0];
    for (int k = 1; k < p->k[i]; k++) if (x[k] < mn) mn = x[k];
    for (int k = 0; k < p->k[i]; k++) x[k] -= mn;
    ex->nshare[i] += mn;
  }
  for (int r = 0; r < d->rows->n; r++) /* any live segment's node is in the row's part */
    ex->nshare[p->seg_node[d->rows->some[r]]] -= d->lambda[r] * (double)d->rows->cap[r];
  for (int e = 0; e < p->m; e++) {
    int ka = p->k[p->ea[e]], kb = p->k[p->eb[e]];
    const double *ma = d->msg2 + d->aoff[e], *mb = d->msg2 + d->boff[e];
    double *x = ex->pair + ex->poff[e], mn = BIG;
    for (int a = 0; a < ka; a++)
      for (int b = 0; b < kb; b++) {
        x[(int64_t)a * kb + b] = (double)p->c[e][(int64_t)a * kb + b] - ma[a] - mb[b];
        if (x[(int64_t)a * kb + b] < mn) mn = x[(int64_t)a * kb + b];
      }
    for (int64_t v = 0; v < (int64_t)ka * kb; v++) x[v] -= mn;
    ex->eshare[e] = mn;
  }
  ex->bound = d->best_bound;
  return SP_OK;
oom:
  sp_sg_excess_free(ex);
  return SP_ENOMEM;
}

void sp_sg_excess_free(sg_excess *ex) {
  free(ex->noff);
  free(ex->poff);
  free(ex->node);
  free(ex->pair);
  free(ex->nshare);
  free(ex->eshare);
  memset(ex, 0, sizeof *ex);
}
