/*
 * test_sg_solver.c - the strategy-graph solver against the exhaustive reference on random
 * graphs (seeded), with and without usage limits and forbidden costs; reductions keep the
 * optimum; infeasibility is reported; the LP files describe the same problem. Graphs whose
 * nodes are chained by bijective edges (the planner's ties between repeated layers, and
 * permutations) check that merging those nodes is exact and really shrinks the model.
 * The Lagrangian bound alone proves forests and never passes the optimum; the IOPDDL
 * writer round-trips through the reader.
 */
#include <check.h>
#include <glpk.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "solver/solver.h"
#include "test_support.h"

static uint64_t rng_state;

static int rnd(int n) {
  rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (int)((rng_state >> 33) % (uint64_t)n);
}

typedef struct gen_opts {
  int max_nodes;       /* 1..max */
  int max_strat;       /* 1..max */
  int extra_edges;     /* beyond a random spanning forest */
  int forbid_one_in;   /* an entry is forbidden with chance 1/forbid_one_in (0: never) */
  int limit_mode;      /* 0: none, 1: between least and largest peak, 2: random of both */
} gen_opts;

/* Peak of the per-time sum of least (or largest) usages. */
static int64_t profile_peak(const sp_sg *g, bool largest) {
  int64_t peak = 0;
  for (int t = 0; t < 64; t++) {
    int64_t sum = 0;
    for (int i = 0; i < g->nnodes; i++) {
      const sp_sg_node *n = &g->nodes[i];
      if (t < n->live.start || t >= n->live.end) continue;
      int64_t v = n->usages[0];
      for (int k = 1; k < n->nstrat; k++)
        if (largest ? n->usages[k] > v : n->usages[k] < v) v = n->usages[k];
      sum += v;
    }
    if (sum > peak) peak = sum;
  }
  return peak;
}

static sp_sg *random_graph(const gen_opts *o) {
  sp_sg *g = sp_sg_new("random");
  int n = 1 + rnd(o->max_nodes);
  for (int i = 0; i < n; i++) {
    int k = 1 + rnd(o->max_strat);
    int64_t c[8], u[8];
    for (int j = 0; j < k; j++) {
      c[j] = o->forbid_one_in && rnd(o->forbid_one_in) == 0 ? SP_SG_FORBIDDEN : rnd(100);
      u[j] = rnd(4) == 0 ? 0 : rnd(30);
    }
    int s = rnd(40);
    ck_assert_int_eq(sp_sg_add_node(g, k, c, u, (sp_sg_interval){s, s + rnd(20)}, NULL), i);
  }
  int64_t m[64];
  for (int i = 1; i < n; i++) { /* a random forest, then extra edges */
    if (rnd(5) == 0) continue;
    int a = rnd(i), b = i;
    for (int j = 0; j < g->nodes[a].nstrat * g->nodes[b].nstrat; j++)
      m[j] = o->forbid_one_in && rnd(o->forbid_one_in) == 0 ? SP_SG_FORBIDDEN : rnd(60);
    ck_assert_int_ge(sp_sg_add_edge(g, a, b, m, NULL), 0);
  }
  for (int x = 0; x < o->extra_edges; x++) {
    int a = rnd(n), b = rnd(n);
    if (a == b) continue;
    for (int j = 0; j < g->nodes[a].nstrat * g->nodes[b].nstrat; j++)
      m[j] = o->forbid_one_in && rnd(o->forbid_one_in) == 0 ? SP_SG_FORBIDDEN : rnd(60);
    ck_assert_int_ge(sp_sg_add_edge(g, a, b, m, NULL), 0);
  }
  int mode = o->limit_mode == 2 ? rnd(2) : o->limit_mode;
  if (mode == 1) {
    int64_t lo = profile_peak(g, false), hi = profile_peak(g, true);
    sp_sg_set_usage_limit(g, lo + (hi > lo ? rnd((int)(hi - lo) + 1) : 0), NULL);
  }
  return g;
}

/* Solves and checks the result against the exhaustive optimum; returns the cost (-1 when
 * infeasible). The result is handed to `keep` when given (the caller frees it). */
static int64_t check_and_keep(const sp_sg *g, const sp_sg_opts *o, int round,
                              sp_sg_result *keep) {
  int plan[32];
  int64_t want = -1;
  int erc = sp_sg_solve_exhaustive(g, (int64_t)1 << 26, plan, &want, NULL);
  ck_assert(erc == SP_OK || erc == SP_ENOTFOUND);
  sp_sg_result res;
  sp_err err;
  ck_assert_int_eq(sp_sg_solve(g, o, &res, &err), SP_OK);
  if (erc == SP_ENOTFOUND) {
    ck_assert_msg(res.status == SP_SG_INFEASIBLE, "round %d: status %s, expected infeasible",
                  round, sp_sg_status_name(res.status));
    ck_assert(!res.has_plan);
    if (keep) *keep = res;
    else sp_sg_result_free(&res);
    return -1;
  }
  ck_assert_msg(res.status == SP_SG_OPTIMAL, "round %d: status %s (cost %lld, optimum %lld)",
                round, sp_sg_status_name(res.status), (long long)res.cost, (long long)want);
  ck_assert(res.has_plan);
  ck_assert_msg(res.cost == want, "round %d: cost %lld, optimum %lld", round,
                (long long)res.cost, (long long)want);
  ck_assert_int_eq(res.bound, want);
  ck_assert(res.gap == 0.0);
  sp_sg_eval ev;
  ck_assert_int_eq(sp_sg_evaluate(g, res.choice, &ev, NULL), SP_OK);
  ck_assert(ev.valid);
  ck_assert_int_eq(ev.cost, want);
  if (keep) *keep = res;
  else sp_sg_result_free(&res);
  return want;
}

static int64_t check_against_exhaustive(const sp_sg *g, const sp_sg_opts *o, int round) {
  return check_and_keep(g, o, round, NULL);
}

static void opts_default(sp_sg_opts *o) {
  sp_sg_opts_init(o);
  o->time_limit = 60; /* far more than needed: these stop on proofs, not the clock */
}

START_TEST(solver_matches_exhaustive_on_random_graphs_with_memory_limits) {
  rng_state = 1;
  gen_opts go = {12, 4, 3, 0, 1};
  sp_sg_opts o;
  opts_default(&o);
  for (int round = 0; round < 20; round++) {
    sp_sg *g = random_graph(&go);
    check_against_exhaustive(g, &o, round);
    sp_sg_free(g);
  }
}
END_TEST

START_TEST(solver_matches_exhaustive_on_random_graphs_without_limit) {
  rng_state = 2;
  gen_opts go = {12, 4, 4, 0, 0};
  sp_sg_opts o;
  opts_default(&o);
  for (int round = 0; round < 15; round++) {
    sp_sg *g = random_graph(&go);
    ck_assert_int_eq(g->usage_limit, SP_SG_NO_LIMIT);
    check_against_exhaustive(g, &o, round);
    sp_sg_free(g);
  }
}
END_TEST

START_TEST(solver_matches_exhaustive_with_forbidden_costs) {
  rng_state = 3;
  gen_opts go = {10, 4, 3, 6, 2};
  sp_sg_opts o;
  opts_default(&o);
  int infeasible = 0;
  for (int round = 0; round < 20; round++) {
    sp_sg *g = random_graph(&go);
    infeasible += check_against_exhaustive(g, &o, round) < 0;
    sp_sg_free(g);
  }
  ck_assert_int_lt(infeasible, 20); /* the mix has feasible graphs too */
}
END_TEST

START_TEST(reduced_and_unreduced_models_reach_the_same_optimum) {
  rng_state = 4;
  gen_opts go = {12, 4, 5, 15, 2};
  sp_sg_opts red, full;
  opts_default(&red);
  opts_default(&full);
  full.no_reduce = true;
  for (int round = 0; round < 15; round++) {
    sp_sg *g = random_graph(&go);
    int64_t a = check_against_exhaustive(g, &red, round);
    int64_t b = check_against_exhaustive(g, &full, round);
    ck_assert_int_eq(a, b);
    sp_sg_free(g);
  }
}
END_TEST

START_TEST(ilp_alone_and_heuristic_alone_agree_with_the_oracle) {
  rng_state = 5;
  gen_opts go = {12, 4, 3, 0, 1};
  sp_sg_opts ilp;
  opts_default(&ilp);
  ilp.no_heuristic = true;
  sp_sg_opts heur;
  opts_default(&heur);
  heur.no_ilp = true;
  heur.work_limit = 2000000;
  for (int round = 0; round < 10; round++) {
    sp_sg *g = random_graph(&go);
    int64_t opt = check_against_exhaustive(g, &ilp, round);
    sp_sg_result res;
    ck_assert_int_eq(sp_sg_solve(g, &heur, &res, NULL), SP_OK);
    if (opt >= 0) { /* the heuristic alone: a valid plan, never below the optimum */
      ck_assert(res.has_plan);
      ck_assert_int_ge(res.cost, opt);
      sp_sg_eval ev;
      sp_sg_evaluate(g, res.choice, &ev, NULL);
      ck_assert(ev.valid);
      ck_assert_int_eq(ev.cost, res.cost);
    }
    sp_sg_result_free(&res);
    sp_sg_free(g);
  }
}
END_TEST

START_TEST(costs_that_could_add_up_to_the_forbidden_mark_are_an_error_naming_the_sum) {
  /* 200 nodes whose dearer strategy costs 2^53 - 1 (each exact): a plan of all the dear ones
   * would cost 1.8e18, past the 1e18 that marks a forbidden entry, so no answer would be
   * right; the solver says so instead of calling a valid plan infeasible. */
  sp_sg *g = sp_sg_new("huge");
  int64_t c[2] = {1, SP_SG_MAX_EXACT - 1}, u[2] = {0, 0};
  for (int i = 0; i < 200; i++)
    ck_assert_int_eq(sp_sg_add_node(g, 2, c, u, (sp_sg_interval){0, 1}, NULL), i);
  sp_sg_opts o;
  opts_default(&o);
  sp_sg_result res;
  sp_err err;
  ck_assert_int_eq(sp_sg_solve(g, &o, &res, &err), SP_ELIMIT);
  ck_assert_str_eq(err.msg, "strategy graph: the costs of one plan can add up to 1.801e+18, not "
                   "below the 1e+18 that marks a forbidden choice (scale the costs down)");
  sp_sg_result_free(&res);
  sp_sg_free(g);
  /* Forbidden entries themselves do not count: 200 forbidden alternatives are fine. */
  g = sp_sg_new("forbidden");
  int64_t f[2] = {1, SP_SG_FORBIDDEN};
  for (int i = 0; i < 200; i++) sp_sg_add_node(g, 2, f, u, (sp_sg_interval){0, 1}, NULL);
  ck_assert_int_eq(sp_sg_solve(g, &o, &res, &err), SP_OK);
  ck_assert_int_eq(res.status, SP_SG_OPTIMAL);
  ck_assert_int_eq(res.cost, 200);
  sp_sg_result_free(&res);
  sp_sg_free(g);
}
END_TEST

START_TEST(limit_below_least_usage_is_reported_infeasible) {
  sp_sg *g = sp_sg_new("tight");
  int64_t c[2] = {1, 2}, u[2] = {10, 6};
  sp_sg_add_node(g, 2, c, u, (sp_sg_interval){0, 10}, NULL);
  sp_sg_add_node(g, 2, c, u, (sp_sg_interval){5, 15}, NULL);
  int64_t m[4] = {0, 1, 1, 0};
  sp_sg_add_edge(g, 0, 1, m, NULL);
  sp_sg_set_usage_limit(g, 11, NULL); /* both live at [5, 10) need at least 6 + 6 */
  sp_sg_opts o;
  opts_default(&o);
  sp_sg_result res;
  ck_assert_int_eq(sp_sg_solve(g, &o, &res, NULL), SP_OK);
  ck_assert_int_eq(res.status, SP_SG_INFEASIBLE);
  ck_assert(!res.has_plan);
  ck_assert_ptr_null(res.choice);
  o.no_reduce = true; /* the plain model must find out too (through the ILP) */
  ck_assert_int_eq(sp_sg_solve(g, &o, &res, NULL), SP_OK);
  ck_assert_int_eq(res.status, SP_SG_INFEASIBLE);
  sp_sg_set_usage_limit(g, 12, NULL);
  o.no_reduce = false;
  ck_assert_int_eq(sp_sg_solve(g, &o, &res, NULL), SP_OK);
  ck_assert_int_eq(res.status, SP_SG_OPTIMAL);
  ck_assert_int_eq(res.cost, 2 + 2 + 0);
  sp_sg_result_free(&res);
  sp_sg_free(g);
}
END_TEST

START_TEST(forbidden_pairs_everywhere_are_reported_infeasible) {
  /* A triangle whose edges allow only "different" pairs of a 2-colouring: no plan. */
  sp_sg *g = sp_sg_new("odd cycle");
  int64_t c[2] = {0, 0};
  for (int i = 0; i < 3; i++) sp_sg_add_node(g, 2, c, NULL, (sp_sg_interval){0, 0}, NULL);
  int64_t diff[4] = {SP_SG_FORBIDDEN, 1, 1, SP_SG_FORBIDDEN};
  sp_sg_add_edge(g, 0, 1, diff, NULL);
  sp_sg_add_edge(g, 1, 2, diff, NULL);
  sp_sg_add_edge(g, 2, 0, diff, NULL);
  sp_sg_opts o;
  opts_default(&o);
  sp_sg_result res;
  ck_assert_int_eq(sp_sg_solve(g, &o, &res, NULL), SP_OK);
  ck_assert_int_eq(res.status, SP_SG_INFEASIBLE);
  ck_assert(!res.has_plan);
  sp_sg_free(g);
}
END_TEST

START_TEST(tree_without_limit_reduces_to_nothing_and_is_optimal) {
  rng_state = 6;
  gen_opts go = {12, 4, 0, 0, 0};
  sp_sg_opts o;
  opts_default(&o);
  o.no_ilp = true; /* the reductions alone must solve a forest */
  for (int round = 0; round < 10; round++) {
    sp_sg *g = random_graph(&go);
    int plan[16];
    int64_t want;
    ck_assert_int_eq(sp_sg_solve_exhaustive(g, (int64_t)1 << 26, plan, &want, NULL), SP_OK);
    sp_sg_result res;
    ck_assert_int_eq(sp_sg_solve(g, &o, &res, NULL), SP_OK);
    ck_assert_int_eq(res.stats.red_nodes, 0);
    ck_assert_int_eq(res.status, SP_SG_OPTIMAL);
    ck_assert_int_eq(res.cost, want);
    sp_sg_result_free(&res);
    sp_sg_free(g);
  }
}
END_TEST

static int progress_calls, incumbent_calls;

static void count_progress(void *ctx, const sp_sg_progress *p) {
  (void)ctx;
  progress_calls++;
  if (strcmp(p->note, "new incumbent") == 0) {
    incumbent_calls++;
    ck_assert(p->has_plan);
  }
}

START_TEST(seed_plan_is_used_and_progress_is_reported) {
  rng_state = 7;
  gen_opts go = {12, 4, 6, 0, 1};
  sp_sg *g = random_graph(&go);
  while (g->nnodes < 6) {
    sp_sg_free(g);
    g = random_graph(&go);
  }
  int plan[16];
  int64_t want;
  ck_assert_int_eq(sp_sg_solve_exhaustive(g, (int64_t)1 << 26, plan, &want, NULL), SP_OK);
  sp_sg_opts o;
  opts_default(&o);
  o.incumbent = plan;
  o.no_ilp = true;
  o.work_limit = 2000000;
  o.progress = count_progress;
  progress_calls = incumbent_calls = 0;
  sp_sg_result res;
  ck_assert_int_eq(sp_sg_solve(g, &o, &res, NULL), SP_OK);
  ck_assert(res.has_plan);
  ck_assert_int_eq(res.cost, want); /* never worse than the seed */
  ck_assert_int_gt(progress_calls, 0);
  ck_assert_int_gt(incumbent_calls, 0);
  sp_sg_result_free(&res);
  sp_sg_free(g);
}
END_TEST

START_TEST(bad_options_are_rejected) {
  sp_sg *g = sp_sg_new(NULL);
  int64_t c[1] = {3};
  sp_sg_add_node(g, 1, c, NULL, (sp_sg_interval){0, 1}, NULL);
  sp_sg_opts o;
  sp_sg_opts_init(&o);
  o.gap = 1.5;
  sp_sg_result res;
  sp_err err;
  ck_assert_int_eq(sp_sg_solve(g, &o, &res, &err), SP_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "gap 1.5"));
  sp_sg_opts_init(&o);
  ck_assert_int_eq(sp_sg_solve(g, &o, &res, &err), SP_OK);
  ck_assert_int_eq(res.status, SP_SG_OPTIMAL);
  ck_assert_int_eq(res.cost, 3);
  sp_sg_result_free(&res);
  sp_sg_free(g);
}
END_TEST

/* Solves an LP file with GLPK's MIP solver; returns the optimum (the file carries the
 * constant as a column fixed at 1), or -1. */
static double solve_lp_file(const char *path) {
  glp_prob *lp = glp_create_prob();
  glp_term_out(GLP_OFF);
  ck_assert_int_eq(glp_read_lp(lp, NULL, path), 0);
  glp_iocp io;
  glp_init_iocp(&io);
  io.presolve = GLP_ON;
  io.msg_lev = GLP_MSG_OFF;
  int rc = glp_intopt(lp, &io);
  double v = rc == 0 && glp_mip_status(lp) == GLP_OPT ? glp_mip_obj_val(lp) : -1.0;
  glp_delete_prob(lp);
  return v;
}

/* A temporary file for LP files (the caller unlinks it). */
static void temp_lp_path(char *path, size_t n) {
  snprintf(path, n, "/tmp/sp_sg_lp_XXXXXX");
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  close(fd);
}

/* Writes `g`'s reduced and unreduced LP files to `path` and checks that GLPK solves each to
 * the exhaustive optimum; returns the files checked (0 when `g` has no valid plan). */
static int check_lp_files(const sp_sg *g, const char *path, int round) {
  int plan[32];
  int64_t want;
  ck_assert_int_le(g->nnodes, 32);
  if (sp_sg_solve_exhaustive(g, (int64_t)1 << 26, plan, &want, NULL) != SP_OK) return 0;
  for (int reduced = 0; reduced < 2; reduced++) {
    sp_err err;
    ck_assert_int_eq(sp_sg_write_lp(g, reduced, path, &err), SP_OK);
    double v = solve_lp_file(path);
    ck_assert_msg(v == (double)want, "round %d %s: LP optimum %.9f, graph optimum %lld",
                  round, reduced ? "reduced" : "unreduced", v, (long long)want);
  }
  return 2;
}

START_TEST(lp_files_have_the_same_optimum_as_the_graph) {
  rng_state = 8;
  gen_opts go = {10, 3, 3, 10, 1};
  char path[64];
  temp_lp_path(path, sizeof path);
  int checked = 0;
  for (int round = 0; round < 12; round++) {
    sp_sg *g = random_graph(&go);
    checked += check_lp_files(g, path, round);
    sp_sg_free(g);
  }
  unlink(path);
  ck_assert_int_ge(checked, 10);
}
END_TEST

START_TEST(larger_graphs_solve_the_same_with_and_without_reductions) {
  rng_state = 9;
  gen_opts go = {60, 4, 30, 0, 1};
  sp_sg_opts red, full;
  opts_default(&red);
  opts_default(&full);
  full.no_reduce = true;
  for (int round = 0; round < 4; round++) {
    sp_sg *g = random_graph(&go);
    sp_sg_result a, b;
    ck_assert_int_eq(sp_sg_solve(g, &red, &a, NULL), SP_OK);
    ck_assert_int_eq(sp_sg_solve(g, &full, &b, NULL), SP_OK);
    ck_assert_int_eq(a.status, b.status);
    if (a.status == SP_SG_OPTIMAL) ck_assert_int_eq(a.cost, b.cost);
    sp_sg_result_free(&a);
    sp_sg_result_free(&b);
    sp_sg_free(g);
  }
}
END_TEST

/* ------------------------------------------------------------------ bijective edges */

/* A chain of nodes with equal strategy counts whose link j pairs strategy s of member j with
 * strategy perm[j][s] of member j + 1 and forbids every other pair. */
typedef struct tie_chain {
  int n;
  int member[4];
  bool identity;  /* the planner's tie: perm is the identity and the pairs cost 0 */
  int perm[3][4];
} tie_chain;

typedef struct tied_graph {
  sp_sg *g;
  tie_chain chain[2];
  int links;      /* edges added by the chains between nodes of two strategies or more */
} tied_graph;

static void random_matrix(int64_t *m, int ka, int kb) {
  for (int j = 0; j < ka * kb; j++) m[j] = rnd(60);
}

static void add_chain_links(tied_graph *t, tie_chain *ch) {
  int k = t->g->nodes[ch->member[0]].nstrat;
  for (int j = 0; j + 1 < ch->n; j++) {
    int64_t m[16];
    for (int s = 0; s < k; s++) ch->perm[j][s] = s;
    if (!ch->identity)
      for (int s = k - 1; s > 0; s--) { /* Fisher-Yates */
        int r = rnd(s + 1), x = ch->perm[j][s];
        ch->perm[j][s] = ch->perm[j][r];
        ch->perm[j][r] = x;
      }
    for (int q = 0; q < k * k; q++) m[q] = SP_SG_FORBIDDEN;
    for (int s = 0; s < k; s++) m[s * k + ch->perm[j][s]] = ch->identity ? 0 : rnd(30);
    ck_assert_int_ge(sp_sg_add_edge(t->g, ch->member[j], ch->member[j + 1], m, NULL), 0);
    t->links += k >= 2; /* single-strategy nodes are fixed, not merged */
  }
}

/* 8 to 12 nodes of up to 4 strategies: an identity chain of 2 to 4 members, a permutation
 * chain of 2 or 3, a random forest and 3 more ordinary edges, plus an ordinary edge between
 * the ends of the identity chain and a node outside it adjacent to its first two members. */
static tied_graph tied_random_graph(bool limit) {
  tied_graph t;
  memset(&t, 0, sizeof t);
  t.g = sp_sg_new("tied");
  int n = 8 + rnd(5), order[12], k[12];
  for (int i = 0; i < n; i++) {
    order[i] = i;
    k[i] = 1 + rnd(4);
  }
  for (int i = n - 1; i > 0; i--) {
    int r = rnd(i + 1), x = order[i];
    order[i] = order[r];
    order[r] = x;
  }
  t.chain[0] = (tie_chain){.n = 2 + rnd(3), .identity = true};
  t.chain[1] = (tie_chain){.n = 2 + rnd(2), .identity = false};
  int used = 0;
  for (int c = 0; c < 2; c++) {
    tie_chain *ch = &t.chain[c];
    for (int j = 0; j < ch->n; j++) ch->member[j] = order[used++];
    int kc = c == 0 ? k[ch->member[0]] : 2 + rnd(3);
    for (int j = 0; j < ch->n; j++) k[ch->member[j]] = kc;
  }
  int outsider = order[used]; /* used <= 7 < n */
  for (int i = 0; i < n; i++) {
    int64_t c[4], u[4];
    for (int j = 0; j < k[i]; j++) {
      c[j] = rnd(100);
      u[j] = rnd(4) == 0 ? 0 : rnd(30);
    }
    int s = rnd(40);
    ck_assert_int_eq(sp_sg_add_node(t.g, k[i], c, u, (sp_sg_interval){s, s + rnd(20)}, NULL), i);
  }
  for (int c = 0; c < 2; c++) add_chain_links(&t, &t.chain[c]);
  int64_t m[16];
  for (int i = 1; i < n; i++) {
    if (rnd(5) == 0) continue;
    int a = rnd(i);
    random_matrix(m, k[a], k[i]);
    ck_assert_int_ge(sp_sg_add_edge(t.g, a, i, m, NULL), 0);
  }
  for (int x = 0; x < 3; x++) {
    int a = rnd(n), b = rnd(n);
    if (a == b) continue;
    random_matrix(m, k[a], k[b]);
    ck_assert_int_ge(sp_sg_add_edge(t.g, a, b, m, NULL), 0);
  }
  const tie_chain *id = &t.chain[0];
  int first = id->member[0], second = id->member[1], last = id->member[id->n - 1];
  random_matrix(m, k[first], k[last]); /* parallel to the tie when the chain has 2 members */
  ck_assert_int_ge(sp_sg_add_edge(t.g, first, last, m, NULL), 0);
  random_matrix(m, k[outsider], k[first]);
  ck_assert_int_ge(sp_sg_add_edge(t.g, outsider, first, m, NULL), 0);
  random_matrix(m, k[second], k[outsider]);
  ck_assert_int_ge(sp_sg_add_edge(t.g, second, outsider, m, NULL), 0);
  if (limit) {
    int64_t lo = profile_peak(t.g, false), hi = profile_peak(t.g, true);
    sp_sg_set_usage_limit(t.g, lo + (hi > lo ? rnd((int)(hi - lo) + 1) : 0), NULL);
  }
  return t;
}

/* The plan follows every chain: equal indices along an identity chain, the permutation
 * along the others. */
static void assert_plan_follows_chains(const tied_graph *t, const int *choice, int round) {
  for (int c = 0; c < 2; c++) {
    const tie_chain *ch = &t->chain[c];
    for (int j = 0; j + 1 < ch->n; j++) {
      int here = choice[ch->member[j]], next = choice[ch->member[j + 1]];
      if (ch->identity)
        ck_assert_msg(next == here, "round %d: tied nodes %d and %d chose %d and %d", round,
                      ch->member[j], ch->member[j + 1], here, next);
      else
        ck_assert_msg(next == ch->perm[j][here], "round %d: link %d-%d: %d is not paired with %d",
                      round, ch->member[j], ch->member[j + 1], here, next);
    }
  }
}

START_TEST(bijective_edges_merge_exactly_without_limit) {
  rng_state = 10;
  sp_sg_opts o;
  opts_default(&o);
  for (int round = 0; round < 24; round++) {
    tied_graph t = tied_random_graph(false);
    sp_sg_result res;
    int64_t want = check_and_keep(t.g, &o, round, &res);
    ck_assert_int_ge(want, 0); /* nothing is forbidden but the chains' off pairs */
    assert_plan_follows_chains(&t, res.choice, round);
    /* Without forbidden costs and memory every link is square from the start, so each one
     * between nodes with a choice merges in the first pass; ordinary edges have no
     * forbidden pair and never do. */
    ck_assert_msg(res.stats.merged == t.links, "round %d: %d merged, %d links", round,
                  res.stats.merged, t.links);
    sp_sg_result_free(&res);
    sp_sg_free(t.g);
  }
}
END_TEST

START_TEST(bijective_edges_merge_exactly_under_a_memory_limit) {
  rng_state = 11;
  sp_sg_opts o;
  opts_default(&o);
  int merged = 0, feasible = 0;
  for (int round = 0; round < 24; round++) {
    tied_graph t = tied_random_graph(true);
    sp_sg_result res;
    int64_t want = check_and_keep(t.g, &o, round, &res);
    if (want >= 0) {
      feasible++;
      merged += res.stats.merged;
      assert_plan_follows_chains(&t, res.choice, round);
    }
    sp_sg_result_free(&res);
    sp_sg_free(t.g);
  }
  ck_assert_int_ge(feasible, 12); /* the limit lies between the least and largest peak */
  ck_assert_int_gt(merged, 0);
}
END_TEST

/* N copies of a 4-node clique (2 strategies each, edges cost 20 when their ends disagree),
 * copy j's node 3 linked to copy j + 1's node 0, node p of every copy tied to node p of the
 * next with the planner's identity edge; two untied nodes E (on nodes 0, 1, 2 of the first
 * copy) and H (on nodes 1, 2, 3 of the last) joined to each other. */
static sp_sg *tied_copies(int copies) {
  sp_sg *g = sp_sg_new("copies");
  int64_t cost[2] = {0, 10}, flip[2] = {10, 0};
  int64_t agree[4] = {0, 20, 20, 0}, tie[4] = {0, SP_SG_FORBIDDEN, SP_SG_FORBIDDEN, 0};
  for (int j = 0; j < copies; j++)
    for (int p = 0; p < 4; p++) sp_sg_add_node(g, 2, cost, NULL, (sp_sg_interval){0, 0}, NULL);
  int e = sp_sg_add_node(g, 2, flip, NULL, (sp_sg_interval){0, 0}, NULL);
  int h = sp_sg_add_node(g, 2, flip, NULL, (sp_sg_interval){0, 0}, NULL);
  for (int j = 0; j < copies; j++) {
    for (int p = 0; p < 4; p++)
      for (int q = p + 1; q < 4; q++) sp_sg_add_edge(g, 4 * j + p, 4 * j + q, agree, NULL);
    if (j + 1 < copies) sp_sg_add_edge(g, 4 * j + 3, 4 * (j + 1), agree, NULL);
  }
  for (int j = 0; j + 1 < copies; j++)
    for (int p = 0; p < 4; p++) sp_sg_add_edge(g, 4 * j + p, 4 * (j + 1) + p, tie, NULL);
  for (int p = 0; p < 3; p++) {
    sp_sg_add_edge(g, e, p, agree, NULL);
    sp_sg_add_edge(g, h, 4 * (copies - 1) + 1 + p, agree, NULL);
  }
  sp_sg_add_edge(g, e, h, agree, NULL);
  return g;
}

START_TEST(identical_tied_copies_reduce_to_one_copy_plus_untied_nodes) {
  enum { COPIES = 4 };
  sp_sg *g = tied_copies(COPIES);
  ck_assert_int_eq(g->nnodes, 4 * COPIES + 2);
  sp_sg_opts o;
  opts_default(&o);
  sp_sg_result res;
  ck_assert_int_ge(check_and_keep(g, &o, 0, &res), 0);
  /* Every copy folds into the first: one clique plus E and H, each node of degree >= 3 and
   * no strategy dominated, so nothing else reduces. */
  ck_assert_int_eq(res.stats.merged, 4 * (COPIES - 1));
  ck_assert_int_eq(res.stats.red_nodes, 4 + 2);
  ck_assert_int_eq(res.stats.red_strategies, 2 * (4 + 2));
  ck_assert_int_eq(res.stats.red_edges, 6 + 3 + 3 + 1);
  ck_assert_int_eq(res.stats.red_pairs, 4 * (6 + 3 + 3 + 1));
  ck_assert_int_eq(res.stats.dominated, 0);
  for (int j = 1; j < COPIES; j++)
    for (int p = 0; p < 4; p++) ck_assert_int_eq(res.choice[4 * j + p], res.choice[p]);
  sp_sg_result_free(&res);
  sp_sg_free(g);
}
END_TEST

START_TEST(lp_files_of_tied_graphs_have_the_same_optimum) {
  rng_state = 12;
  char path[64];
  temp_lp_path(path, sizeof path);
  int checked = 0;
  for (int round = 0; round < 11; round++) {
    /* Ten random tied graphs, half with a limit, then the clique copies. */
    tied_graph t = {0};
    if (round < 10) t = tied_random_graph(round % 2 == 0);
    else t.g = tied_copies(3);
    checked += check_lp_files(t.g, path, round);
    sp_sg_free(t.g);
  }
  unlink(path);
  ck_assert_int_ge(checked, 14);
}
END_TEST

/* ------------------------------------------------------------------ Lagrangian bound */

START_TEST(lagrangian_bound_alone_proves_forests_without_reductions) {
  /* On a forest the local LP is exact, so message passing run until it stops improving
   * reaches the optimum: without reductions (which would solve a forest) and without the
   * ILP, the Lagrangian bound alone must prove the plan. */
  rng_state = 13;
  gen_opts go = {12, 4, 0, 0, 0};
  sp_sg_opts o;
  opts_default(&o);
  o.no_reduce = true;
  o.no_ilp = true;
  int multi = 0;
  for (int round = 0; round < 12; round++) {
    sp_sg *g = random_graph(&go);
    multi += g->nedges >= 3;
    sp_sg_result res;
    check_and_keep(g, &o, round, &res);
    ck_assert(!res.stats.ilp_ran);
    sp_sg_result_free(&res);
    sp_sg_free(g);
  }
  ck_assert_int_ge(multi, 6); /* most of them are real trees, not a node or two */
}
END_TEST

START_TEST(lagrangian_bound_never_exceeds_the_optimum_on_loopy_graphs) {
  /* Cycles, memory limits and forbidden entries: the bound of the heuristic-only solve is
   * a true lower bound, and a plan it proves optimal is optimal. */
  rng_state = 14;
  gen_opts go = {12, 4, 8, 8, 2};
  int compared = 0, proved = 0;
  for (int round = 0; round < 30; round++) {
    sp_sg *g = random_graph(&go);
    int plan[32];
    int64_t want = -1;
    if (sp_sg_solve_exhaustive(g, (int64_t)1 << 26, plan, &want, NULL) != SP_OK) {
      sp_sg_free(g);
      continue;
    }
    sp_sg_opts o;
    opts_default(&o);
    o.no_ilp = true;
    o.no_reduce = round % 2 == 1;
    o.work_limit = 200000;
    sp_sg_result res;
    ck_assert_int_eq(sp_sg_solve(g, &o, &res, NULL), SP_OK);
    ck_assert(res.has_plan);
    ck_assert_msg(res.bound <= want, "round %d: bound %lld above the optimum %lld", round,
                  (long long)res.bound, (long long)want);
    ck_assert_int_ge(res.cost, want);
    if (res.status == SP_SG_OPTIMAL) {
      ck_assert_int_eq(res.cost, want);
      proved++;
    }
    compared++;
    sp_sg_result_free(&res);
    sp_sg_free(g);
  }
  ck_assert_int_ge(compared, 20);
  ck_assert_int_gt(proved, 0);
}
END_TEST

/* A path over the nodes in a shuffled order, its edges added in another shuffled order (so
 * that no sweep follows the path), 4 strategies per node, no limit. Returns the optimum,
 * computed by dynamic programming along the path. */
static int64_t shuffled_chain(int n, sp_sg **out) {
  int perm[64], eord[64];
  for (int i = 0; i < n; i++) perm[i] = eord[i] = i;
  for (int i = n - 1; i > 0; i--) {
    int j = rnd(i + 1), t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
    j = rnd(i + 1);
    t = eord[i];
    eord[i] = eord[j];
    eord[j] = t;
  }
  enum { K = 4 };
  int64_t cost[64][K], pair[64][K * K]; /* pair[s]: between path positions s and s + 1 */
  sp_sg *g = sp_sg_new("chain");
  for (int i = 0; i < n; i++) {
    for (int k = 0; k < K; k++) cost[i][k] = rnd(100);
    for (int v = 0; v < K * K; v++) pair[i][v] = rnd(100);
  }
  /* node perm[s] is position s of the path */
  int64_t c[K];
  for (int i = 0; i < n; i++) {
    int s = 0;
    while (perm[s] != i) s++;
    for (int k = 0; k < K; k++) c[k] = cost[s][k];
    ck_assert_int_eq(sp_sg_add_node(g, K, c, NULL, (sp_sg_interval){0, 0}, NULL), i);
  }
  for (int x = 0; x < n; x++) {
    int s = eord[x];
    if (s == n - 1) continue;
    ck_assert_int_ge(sp_sg_add_edge(g, perm[s], perm[s + 1], pair[s], NULL), 0);
  }
  int64_t best[K];
  for (int k = 0; k < K; k++) best[k] = cost[0][k];
  for (int s = 1; s < n; s++) {
    int64_t nb[K];
    for (int y = 0; y < K; y++) {
      nb[y] = INT64_MAX;
      for (int x = 0; x < K; x++)
        if (best[x] + pair[s - 1][x * K + y] < nb[y]) nb[y] = best[x] + pair[s - 1][x * K + y];
      nb[y] += cost[s][y];
    }
    memcpy(best, nb, sizeof best);
  }
  int64_t opt = best[0];
  for (int k = 1; k < K; k++) if (best[k] < opt) opt = best[k];
  *out = g;
  return opt;
}

START_TEST(lagrangian_bound_alone_proves_long_shuffled_chains) {
  /* Information crosses a few edges per sweep of the messages, so a long path in shuffled
   * order needs many sweeps before the bound reaches the optimum: the relaxation must keep
   * passing messages while they raise the bound, not stop after a round when no usage
   * price has to move. */
  rng_state = 16;
  sp_sg_opts o;
  opts_default(&o);
  o.no_reduce = true;
  o.no_ilp = true;
  for (int round = 0; round < 4; round++) {
    sp_sg *g = NULL;
    int64_t want = shuffled_chain(60, &g);
    sp_sg_result res;
    ck_assert_int_eq(sp_sg_solve(g, &o, &res, NULL), SP_OK);
    ck_assert_msg(res.status == SP_SG_OPTIMAL, "round %d: status %s, cost %lld, bound %lld, "
                  "optimum %lld", round, sp_sg_status_name(res.status), (long long)res.cost,
                  (long long)res.bound, (long long)want);
    ck_assert_int_eq(res.cost, want);
    ck_assert_int_eq(res.bound, want);
    sp_sg_result_free(&res);
    sp_sg_free(g);
  }
}
END_TEST

/* ------------------------------------------------------------------ IOPDDL writer */

static void assert_same_graph(const sp_sg *a, const sp_sg *b) {
  ck_assert_str_eq(a->name, b->name);
  ck_assert_int_eq(a->nnodes, b->nnodes);
  ck_assert_int_eq(a->nedges, b->nedges);
  ck_assert_int_eq(a->usage_limit, b->usage_limit);
  for (int i = 0; i < a->nnodes; i++) {
    const sp_sg_node *x = &a->nodes[i], *y = &b->nodes[i];
    ck_assert_int_eq(x->nstrat, y->nstrat);
    ck_assert_int_eq(x->live.start, y->live.start);
    ck_assert_int_eq(x->live.end, y->live.end);
    for (int k = 0; k < x->nstrat; k++) {
      ck_assert_int_eq(x->costs[k], y->costs[k]);
      ck_assert_int_eq(x->usages[k], y->usages[k]);
    }
  }
  for (int e = 0; e < a->nedges; e++) {
    const sp_sg_edge *x = &a->edges[e], *y = &b->edges[e];
    ck_assert_int_eq(x->a, y->a);
    ck_assert_int_eq(x->b, y->b);
    int64_t n = (int64_t)a->nodes[x->a].nstrat * a->nodes[x->b].nstrat;
    for (int64_t v = 0; v < n; v++) ck_assert_int_eq(x->costs[v], y->costs[v]);
  }
}

/* The first byte of a file. */
static int first_byte(const char *path) {
  FILE *f = fopen(path, "rb");
  ck_assert_ptr_nonnull(f);
  int c = fgetc(f);
  fclose(f);
  return c;
}

START_TEST(iopddl_writer_round_trips_plain_and_gzip) {
  rng_state = 15;
  gen_opts go = {12, 4, 4, 5, 2};
  char plain[64], gz[72];
  snprintf(plain, sizeof plain, "/tmp/sp_sg_io_XXXXXX");
  int fd = mkstemp(plain);
  ck_assert_int_ge(fd, 0);
  close(fd);
  snprintf(gz, sizeof gz, "%s.gz", plain);
  int limited = 0, forbidden = 0;
  for (int round = 0; round < 10; round++) {
    sp_sg *g = random_graph(&go);
    limited += g->usage_limit != SP_SG_NO_LIMIT;
    for (int e = 0; e < g->nedges; e++)
      forbidden += g->edges[e].costs[0] == SP_SG_FORBIDDEN;
    for (int z = 0; z < 2; z++) {
      const char *path = z ? gz : plain;
      sp_err err;
      ck_assert_int_eq(sp_iopddl_write_file(g, path, &err), SP_OK);
      ck_assert_int_eq(first_byte(path), z ? 0x1f : '{'); /* gzip magic, or plain JSON */
      sp_sg *back = NULL;
      ck_assert_msg(sp_iopddl_read_file(path, &back, &err) == SP_OK, "%s", err.msg);
      assert_same_graph(g, back);
      sp_sg_free(back);
    }
    sp_sg_free(g);
  }
  ck_assert_int_gt(limited, 0);
  ck_assert_int_lt(limited, 10);
  ck_assert_int_gt(forbidden, 0);
  /* A name that needs escaping, a graph without edges. */
  sp_sg *g = sp_sg_new("a \"quoted\" name\\with\ttab");
  int64_t c[2] = {3, 5}, u[2] = {7, 0};
  ck_assert_int_eq(sp_sg_add_node(g, 2, c, u, (sp_sg_interval){-4, 9}, NULL), 0);
  ck_assert_int_eq(sp_iopddl_write_file(g, plain, NULL), SP_OK);
  sp_sg *back = NULL;
  ck_assert_int_eq(sp_iopddl_read_file(plain, &back, NULL), SP_OK);
  assert_same_graph(g, back);
  sp_sg_free(back);
  sp_sg_free(g);
  unlink(plain);
  unlink(gz);
}
END_TEST

START_TEST(iopddl_writer_reports_an_unwritable_path) {
  sp_sg *g = sp_sg_new("x");
  int64_t c[1] = {1};
  sp_sg_add_node(g, 1, c, NULL, (sp_sg_interval){0, 1}, NULL);
  sp_err err;
  ck_assert_int_eq(sp_iopddl_write_file(g, "/nonexistent-dir/g.json", &err), SP_EIO);
  ck_assert_ptr_nonnull(strstr(err.msg, "/nonexistent-dir/g.json"));
  sp_sg_free(g);
}
END_TEST

static Suite *sg_solver_suite(void) {
  Suite *s = suite_create("sg_solver");
  TCase *tc = tcase_create("oracle");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, solver_matches_exhaustive_on_random_graphs_with_memory_limits);
  tcase_add_test(tc, solver_matches_exhaustive_on_random_graphs_without_limit);
  tcase_add_test(tc, solver_matches_exhaustive_with_forbidden_costs);
  tcase_add_test(tc, reduced_and_unreduced_models_reach_the_same_optimum);
  tcase_add_test(tc, ilp_alone_and_heuristic_alone_agree_with_the_oracle);
  tcase_add_test(tc, tree_without_limit_reduces_to_nothing_and_is_optimal);
  tcase_add_test(tc, larger_graphs_solve_the_same_with_and_without_reductions);
  tcase_add_test(tc, bijective_edges_merge_exactly_without_limit);
  tcase_add_test(tc, bijective_edges_merge_exactly_under_a_memory_limit);
  suite_add_tcase(s, tc);
  TCase *tb = tcase_create("behaviour");
  tcase_set_timeout(tb, 120);
  tcase_add_test(tb, limit_below_least_usage_is_reported_infeasible);
  tcase_add_test(tb, costs_that_could_add_up_to_the_forbidden_mark_are_an_error_naming_the_sum);
  tcase_add_test(tb, forbidden_pairs_everywhere_are_reported_infeasible);
  tcase_add_test(tb, seed_plan_is_used_and_progress_is_reported);
  tcase_add_test(tb, bad_options_are_rejected);
  tcase_add_test(tb, lp_files_have_the_same_optimum_as_the_graph);
  tcase_add_test(tb, identical_tied_copies_reduce_to_one_copy_plus_untied_nodes);
  tcase_add_test(tb, lp_files_of_tied_graphs_have_the_same_optimum);
  tcase_add_test(tb, lagrangian_bound_alone_proves_forests_without_reductions);
  tcase_add_test(tb, lagrangian_bound_alone_proves_long_shuffled_chains);
  tcase_add_test(tb, lagrangian_bound_never_exceeds_the_optimum_on_loopy_graphs);
  tcase_add_test(tb, iopddl_writer_round_trips_plain_and_gzip);
  tcase_add_test(tb, iopddl_writer_reports_an_unwritable_path);
  suite_add_tcase(s, tb);
  return s;
}

int main(void) { return sp_test_run(sg_solver_suite()); }
