/*
 * strategy_graph.c - building, evaluating and exhaustively solving strategy graphs
 * (see solver.h).
 *
 * The node and edge arrays grow by doubling inside the graph's arena (the old copies stay
 * in the arena until sp_sg_free; growth is geometric, so the waste is bounded by the final
 * size). The exhaustive solver is deliberately simple and obviously right: it is the oracle
 * the real solver is tested against.
 */
#include "solver/solver.h"

#include <stdlib.h>
#include <string.h>

#include "ir/strbuf.h"

sp_sg *sp_sg_new(const char *name) {
  sp_arena *a = sp_arena_new(0);
  if (!a) return NULL;
  sp_sg *g = sp_arena_calloc(a, 1, sizeof *g);
  if (!g) goto fail;
  g->arena = a;
  g->name = sp_arena_strdup(a, name ? name : "");
  if (!g->name) goto fail;
  g->usage_limit = SP_SG_NO_LIMIT;
  return g;
fail:
  sp_arena_free(a);
  return NULL;
}

void sp_sg_free(sp_sg *g) {
  if (g) sp_arena_free(g->arena);
}

static int check_costs(const int64_t *v, int64_t n, const char *what, sp_err *err) {
  for (int64_t i = 0; i < n; i++)
    if (v[i] < 0)
      return sp_err_set(err, SP_EINVAL, "%s[%lld] is %lld; costs and usages must be >= 0", what,
                        (long long)i, (long long)v[i]);
  return SP_OK;
}

int sp_sg_add_node(sp_sg *g, int nstrat, const int64_t *costs, const int64_t *usages,
                   sp_sg_interval live, sp_err *err) {
  if (g->nnodes >= SP_SG_MAX_NODES)
    return sp_err_set(err, SP_ELIMIT, "more than %d nodes (SP_SG_MAX_NODES)", SP_SG_MAX_NODES);
  if (nstrat < 1)
    return sp_err_set(err, SP_EINVAL, "node %d has %d strategies; it needs at least one",
                      g->nnodes, nstrat);
  if (nstrat > SP_SG_MAX_STRATEGIES)
    return sp_err_set(err, SP_ELIMIT, "node %d has %d strategies, more than %d "
                      "(SP_SG_MAX_STRATEGIES)", g->nnodes, nstrat, SP_SG_MAX_STRATEGIES);
  if (live.start > live.end)
    return sp_err_set(err, SP_EINVAL, "node %d has interval [%lld, %lld) whose start is after "
                      "its end", g->nnodes, (long long)live.start, (long long)live.end);
  int rc = check_costs(costs, nstrat, "costs", err);
  if (rc == SP_OK && usages) rc = check_costs(usages, nstrat, "usages", err);
  if (rc != SP_OK) return sp_err_prefix(err, "node %d", g->nnodes);
  int64_t most = 0, sum;
  for (int k = 0; usages && k < nstrat; k++)
    if (usages[k] > most) most = usages[k];
  if (__builtin_add_overflow(g->usage_sum, most, &sum) || sum > SP_SG_MAX_USAGE_SUM)
    return sp_err_set(err, SP_ELIMIT, "node %d: the usages of one plan could add up to more "
                      "than %.4g (SP_SG_MAX_USAGE_SUM), past what the live usage is counted in",
                      g->nnodes, (double)SP_SG_MAX_USAGE_SUM);
  if (sp_arena_grow(g->arena, (void **)&g->nodes, &g->cap_nodes, g->nnodes, sizeof *g->nodes))
    return sp_err_set(err, SP_ENOMEM, "out of memory adding node %d", g->nnodes);
  sp_sg_node *n = &g->nodes[g->nnodes];
  n->nstrat = nstrat;
  n->costs = sp_arena_alloc(g->arena, sizeof(int64_t) * (size_t)nstrat);
  n->usages = sp_arena_calloc(g->arena, (size_t)nstrat, sizeof(int64_t));
  if (!n->costs || !n->usages)
    return sp_err_set(err, SP_ENOMEM, "out of memory adding node %d", g->nnodes);
  memcpy(n->costs, costs, sizeof(int64_t) * (size_t)nstrat);
  if (usages) memcpy(n->usages, usages, sizeof(int64_t) * (size_t)nstrat);
  n->live = live;
  g->usage_sum = sum;
  return g->nnodes++;
}

int sp_sg_add_edge(sp_sg *g, int a, int b, const int64_t *costs, sp_err *err) {
  if (g->nedges >= SP_SG_MAX_EDGES)
    return sp_err_set(err, SP_ELIMIT, "more than %d edges (SP_SG_MAX_EDGES)", SP_SG_MAX_EDGES);
  if (a < 0 || a >= g->nnodes || b < 0 || b >= g->nnodes)
    return sp_err_set(err, SP_EINVAL, "edge %d joins nodes %d and %d, but there are %d nodes",
                      g->nedges, a, b, g->nnodes);
  if (a == b)
    return sp_err_set(err, SP_EINVAL, "edge %d joins node %d to itself", g->nedges, a);
  int64_t n = (int64_t)g->nodes[a].nstrat * g->nodes[b].nstrat;
  if (n > SP_SG_MAX_PAIRS)
    return sp_err_set(err, SP_ELIMIT, "edge %d has %lld cost entries, more than %d "
                      "(SP_SG_MAX_PAIRS)", g->nedges, (long long)n, SP_SG_MAX_PAIRS);
  int rc = check_costs(costs, n, "costs", err);
  if (rc != SP_OK) return sp_err_prefix(err, "edge %d", g->nedges);
  if (sp_arena_grow(g->arena, (void **)&g->edges, &g->cap_edges, g->nedges, sizeof *g->edges))
    return sp_err_set(err, SP_ENOMEM, "out of memory adding edge %d", g->nedges);
  sp_sg_edge *e = &g->edges[g->nedges];
  e->a = a;
  e->b = b;
  e->costs = sp_arena_alloc(g->arena, sizeof(int64_t) * (size_t)n);
  if (!e->costs) return sp_err_set(err, SP_ENOMEM, "out of memory adding edge %d", g->nedges);
  memcpy(e->costs, costs, sizeof(int64_t) * (size_t)n);
  return g->nedges++;
}

int sp_sg_set_usage_limit(sp_sg *g, int64_t limit, sp_err *err) {
  if (limit < 0)
    return sp_err_set(err, SP_EINVAL, "usage limit %lld is negative", (long long)limit);
  g->usage_limit = limit;
  return SP_OK;
}

/* ------------------------------------------------------------------ evaluation */

static int64_t sat_add(int64_t x, int64_t y) {
  return x > INT64_MAX - y ? INT64_MAX : x + y;
}

typedef struct usage_event {
  int64_t time, delta;
} usage_event;

static int cmp_event(const void *p, const void *q) {
  const usage_event *x = p, *y = q;
  if (x->time != y->time) return x->time < y->time ? -1 : 1;
  /* At equal times releases come first: an interval [s, e) is not live at e. */
  return (x->delta > y->delta) - (x->delta < y->delta);
}

/* The peak live usage of `choice` and the first time it is reached. */
static int usage_peak(const sp_sg *g, const int *choice, int64_t *peak, int64_t *peak_time) {
  *peak = 0;
  *peak_time = 0;
  usage_event *ev = malloc(sizeof *ev * 2 * (size_t)(g->nnodes ? g->nnodes : 1));
  if (!ev) return SP_ENOMEM;
  size_t n = 0;
  for (int i = 0; i < g->nnodes; i++) {
    const sp_sg_node *nd = &g->nodes[i];
    int64_t u = nd->usages[choice[i]];
    if (nd->live.start >= nd->live.end || u == 0) continue;
    ev[n++] = (usage_event){nd->live.start, u};
    ev[n++] = (usage_event){nd->live.end, -u};
  }
  qsort(ev, n, sizeof *ev, cmp_event);
  int64_t cur = 0;
  for (size_t k = 0; k < n; k++) {
    cur = ev[k].delta > 0 ? sat_add(cur, ev[k].delta) : cur + ev[k].delta;
    if (cur > *peak) {
      *peak = cur;
      *peak_time = ev[k].time;
    }
  }
  free(ev);
  return SP_OK;
}

int sp_sg_evaluate(const sp_sg *g, const int *choice, sp_sg_eval *out, sp_err *err) {
  memset(out, 0, sizeof *out);
  int64_t cost = 0;
  bool forbidden = false;
  for (int i = 0; i < g->nnodes; i++) {
    if (choice[i] < 0 || choice[i] >= g->nodes[i].nstrat)
      return sp_err_set(err, SP_EINVAL, "node %d: strategy %d is out of range [0, %d)", i,
                        choice[i], g->nodes[i].nstrat);
    int64_t c = g->nodes[i].costs[choice[i]];
    if (c >= SP_SG_FORBIDDEN) forbidden = true;
    cost = sat_add(cost, c);
  }
  for (int e = 0; e < g->nedges; e++) {
    const sp_sg_edge *ed = &g->edges[e];
    int64_t c = ed->costs[(int64_t)choice[ed->a] * g->nodes[ed->b].nstrat + choice[ed->b]];
    if (c >= SP_SG_FORBIDDEN) forbidden = true;
    cost = sat_add(cost, c);
  }
  if (usage_peak(g, choice, &out->peak_usage, &out->peak_time) != SP_OK)
    return sp_err_set(err, SP_ENOMEM, "out of memory evaluating a plan");
  out->cost = cost;
  out->forbidden = forbidden;
  out->over_limit = out->peak_usage > g->usage_limit;
  out->valid = !out->forbidden && !out->over_limit;
  return SP_OK;
}

int64_t sp_sg_num_node_vars(const sp_sg *g) {
  int64_t n = 0;
  for (int i = 0; i < g->nnodes; i++) n += g->nodes[i].nstrat;
  return n;
}

int64_t sp_sg_num_edge_vars(const sp_sg *g) {
  int64_t n = 0;
  for (int e = 0; e < g->nedges; e++)
    n += (int64_t)g->nodes[g->edges[e].a].nstrat * g->nodes[g->edges[e].b].nstrat;
  return n;
}

char *sp_sg_format_plan(const sp_sg *g, const int *choice) {
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_strbuf_putc(&sb, '[');
  for (int i = 0; i < g->nnodes; i++) {
    if (i) sp_strbuf_puts(&sb, ", ");
    sp_strbuf_put_i64(&sb, choice[i]);
  }
  sp_strbuf_putc(&sb, ']');
  if (!sp_strbuf_ok(&sb)) {
    sp_strbuf_free(&sb);
    return NULL;
  }
  return sp_strbuf_detach(&sb);
}

/* ------------------------------------------------------------------ exhaustive search */

/* State of the depth-first search; nodes are assigned in index order. */
typedef struct dfs {
  const sp_sg *g;
  int n, ntimes;
  int64_t *times;       /* distinct interval boundaries, sorted */
  int *t0, *t1;         /* per node: live over compressed times [t0, t1) */
  int64_t *minu;        /* per node: least usage of an allowed strategy */
  int64_t *restmin;     /* [n + 1]: sum of the least allowed node costs of nodes >= d */
  int64_t *lo;          /* per time: usage of assigned nodes + least usage of the others */
  int *back_off, *back; /* per node: edges to earlier nodes (CSR) */
} dfs;

static int cmp_i64(const void *p, const void *q) {
  int64_t x = *(const int64_t *)p, y = *(const int64_t *)q;
  return (x > y) - (x < y);
}

static int time_index(const dfs *s, int64_t t) {
  int lo = 0, hi = s->ntimes;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (s->times[mid] < t) lo = mid + 1; else hi = mid;
  }
  return lo;
}

static void dfs_free(dfs *s) {
  free(s->times); free(s->t0); free(s->t1); free(s->minu); free(s->restmin); free(s->lo);
  free(s->back_off); free(s->back);
}

static int dfs_init(dfs *s, const sp_sg *g) {
  int n = g->nnodes;
  memset(s, 0, sizeof *s);
  s->g = g;
  s->n = n;
  size_t nn = (size_t)n + 1;
  s->times = malloc(sizeof(int64_t) * 2 * nn);
  s->t0 = malloc(sizeof(int) * nn);
  s->t1 = malloc(sizeof(int) * nn);
  s->minu = malloc(sizeof(int64_t) * nn);
  s->restmin = calloc(nn, sizeof(int64_t));
  s->lo = calloc(2 * nn, sizeof(int64_t));
  s->back_off = calloc(nn + 1, sizeof(int));
  s->back = malloc(sizeof(int) * ((size_t)g->nedges + 1));
  if (!s->times || !s->t0 || !s->t1 || !s->minu || !s->restmin || !s->lo || !s->back_off ||
      !s->back)
    return SP_ENOMEM;
  int nt = 0;
  for (int i = 0; i < n; i++) {
    if (g->nodes[i].live.start >= g->nodes[i].live.end) continue;
    s->times[nt++] = g->nodes[i].live.start;
    s->times[nt++] = g->nodes[i].live.end;
  }
  qsort(s->times, (size_t)nt, sizeof(int64_t), cmp_i64);
  int u = 0;
  for (int k = 0; k < nt; k++)
    if (u == 0 || s->times[u - 1] != s->times[k]) s->times[u++] = s->times[k];
  s->ntimes = u;
  for (int i = n - 1; i >= 0; i--) {
    const sp_sg_node *nd = &g->nodes[i];
    int64_t mc = INT64_MAX, mu = INT64_MAX;
    for (int k = 0; k < nd->nstrat; k++) {
      if (nd->costs[k] >= SP_SG_FORBIDDEN) continue;
      if (nd->costs[k] < mc) mc = nd->costs[k];
      if (nd->usages[k] < mu) mu = nd->usages[k];
    }
    if (mc == INT64_MAX) return SP_ENOTFOUND; /* every strategy of node i is forbidden */
    s->restmin[i] = sat_add(s->restmin[i + 1], mc);
    s->minu[i] = mu;
    if (nd->live.start < nd->live.end) {
      s->t0[i] = time_index(s, nd->live.start);
      s->t1[i] = time_index(s, nd->live.end);
    } else {
      s->t0[i] = s->t1[i] = 0;
    }
    for (int t = s->t0[i]; t < s->t1[i]; t++) s->lo[t] = sat_add(s->lo[t], mu);
  }
  for (int e = 0; e < g->nedges; e++) {
    int later = g->edges[e].a > g->edges[e].b ? g->edges[e].a : g->edges[e].b;
    s->back_off[later + 1]++;
  }
  for (int i = 0; i < n; i++) s->back_off[i + 1] += s->back_off[i];
  int *fill = calloc(nn, sizeof(int));
  if (!fill) return SP_ENOMEM;
  for (int e = 0; e < g->nedges; e++) {
    int later = g->edges[e].a > g->edges[e].b ? g->edges[e].a : g->edges[e].b;
    s->back[s->back_off[later] + fill[later]++] = e;
  }
  free(fill);
  return SP_OK;
}

/* Node d's cost under strategy k given the strategies of nodes < d; SP_SG_FORBIDDEN or more
 * when it uses a forbidden cost. */
static int64_t dfs_step_cost(const dfs *s, const int *choice, int d, int k) {
  const sp_sg *g = s->g;
  int64_t c = g->nodes[d].costs[k];
  if (c >= SP_SG_FORBIDDEN) return SP_SG_FORBIDDEN;
  for (int p = s->back_off[d]; p < s->back_off[d + 1]; p++) {
    const sp_sg_edge *e = &g->edges[s->back[p]];
    int64_t ec = e->a == d ? e->costs[(int64_t)k * g->nodes[e->b].nstrat + choice[e->b]]
                           : e->costs[(int64_t)choice[e->a] * g->nodes[d].nstrat + k];
    if (ec >= SP_SG_FORBIDDEN) return SP_SG_FORBIDDEN;
    c = sat_add(c, ec);
  }
  return c;
}

/* Adds `sign` * (usage - least usage) of node d's strategy k to the profile; reports whether
 * the profile stays within the limit over d's interval. */
static bool dfs_apply_usage(dfs *s, int d, int k, int sign) {
  int64_t du = s->g->nodes[d].usages[k] - s->minu[d];
  bool ok = true;
  for (int t = s->t0[d]; t < s->t1[d]; t++) {
    s->lo[t] += sign * du;
    if (s->lo[t] > s->g->usage_limit) ok = false;
  }
  return ok;
}

int sp_sg_solve_exhaustive(const sp_sg *g, int64_t max_plans, int *choice, int64_t *cost,
                           sp_err *err) {
  int64_t plans = 1;
  for (int i = 0; i < g->nnodes; i++) {
    if (plans > max_plans / g->nodes[i].nstrat)
      return sp_err_set(err, SP_ELIMIT, "more than %lld plans to enumerate",
                        (long long)max_plans);
    plans *= g->nodes[i].nstrat;
  }
  dfs s;
  int rc = dfs_init(&s, g);
  int n = g->nnodes;
  int *cur = malloc(sizeof(int) * ((size_t)n + 1));
  int64_t *partial = malloc(sizeof(int64_t) * ((size_t)n + 2));
  bool *applied = calloc((size_t)n + 1, sizeof(bool));
  int64_t best = INT64_MAX;
  if (rc == SP_OK && (!cur || !partial || !applied)) rc = SP_ENOMEM;
  if (rc != SP_OK) goto done;
  for (int t = 0; t < s.ntimes; t++)
    if (s.lo[t] > g->usage_limit) goto done; /* even the least usages do not fit */
  if (n == 0) {
    best = 0;
    goto done;
  }
  partial[0] = 0;
  int d = 0;
  cur[0] = -1;
  while (d >= 0) {
    if (applied[d]) {
      dfs_apply_usage(&s, d, cur[d], -1);
      applied[d] = false;
    }
    if (++cur[d] >= g->nodes[d].nstrat) {
      d--;
      continue;
    }
    int64_t step = dfs_step_cost(&s, cur, d, cur[d]);
    if (step >= SP_SG_FORBIDDEN) continue;
    int64_t sum = sat_add(partial[d], step);
    if (sat_add(sum, s.restmin[d + 1]) >= best) continue;
    applied[d] = true;
    if (!dfs_apply_usage(&s, d, cur[d], +1)) continue;
    if (d == n - 1) {
      best = sum;
      memcpy(choice, cur, sizeof(int) * (size_t)n);
      continue;
    }
    partial[d + 1] = sum;
    cur[++d] = -1;
  }
done:
  free(cur);
  free(partial);
  free(applied);
  dfs_free(&s);
  if (rc == SP_ENOMEM) return sp_err_set(err, SP_ENOMEM, "out of memory in exhaustive search");
  if (rc == SP_ENOTFOUND || best == INT64_MAX)
    return sp_err_set(err, SP_ENOTFOUND, "no valid plan exists");
  *cost = best;
  return SP_OK;
}
