/*
 * test_strategy_graph.c - strategy graphs: building, evaluating, the exhaustive reference
 * solver, and the IOPDDL reader (inline JSON, plain and gzip files, and its errors).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "solver/solver.h"
#include "test_support.h"

/* The contest's example problem (nodes 0..4, limit 50); its optimum is 445 with
 * [0, 0, 2, 1, 0], checked by enumeration below. */
static const char *EXAMPLE =
    "{\"problem\": {\"name\": \"example\",\n"
    " \"nodes\": {\"intervals\": [[30, 70], [40, 70], [50, 120], [110, 140], [110, 150]],\n"
    "   \"costs\": [[15], [55, 65], [25, 45, 35], [85, 75], [95]],\n"
    "   \"usages\": [[10], [25, 25], [15, 20, 15], [10, 10], [15]]},\n"
    " \"edges\": {\"nodes\": [[0, 1], [0, 2], [1, 3], [2, 4], [3, 4]],\n"
    "   \"costs\": [[30, 40], [50, 10, 40], [90, 10, 20, 80], [60, 20, 30], [70, 60]]},\n"
    " \"usage_limit\": 50}}";

static sp_sg *parse(const char *json, sp_err *err) {
  sp_sg *g = NULL;
  sp_err_clear(err);
  sp_iopddl_parse(json, strlen(json), &g, err);
  return g;
}

/* Every plan, evaluated: the cheapest valid one (the oracle of the oracle). */
static int64_t brute_force(const sp_sg *g, bool *found) {
  int n = g->nnodes;
  int *c = calloc((size_t)n + 1, sizeof(int));
  int64_t best = INT64_MAX;
  *found = false;
  for (;;) {
    sp_sg_eval ev;
    ck_assert_int_eq(sp_sg_evaluate(g, c, &ev, NULL), SP_OK);
    if (ev.valid && ev.cost < best) {
      best = ev.cost;
      *found = true;
    }
    int i = 0;
    while (i < n && ++c[i] == g->nodes[i].nstrat) c[i++] = 0;
    if (i == n) break;
  }
  free(c);
  return best;
}

START_TEST(example_parses_with_its_counts_and_limit) {
  sp_err err;
  sp_sg *g = parse(EXAMPLE, &err);
  ck_assert_msg(g != NULL, "%s", err.msg);
  ck_assert_str_eq(g->name, "example");
  ck_assert_int_eq(g->nnodes, 5);
  ck_assert_int_eq(g->nedges, 5);
  ck_assert_int_eq(g->usage_limit, 50);
  ck_assert_int_eq(g->nodes[2].nstrat, 3);
  ck_assert_int_eq(g->nodes[2].costs[1], 45);
  ck_assert_int_eq(g->nodes[2].usages[1], 20);
  ck_assert_int_eq(g->nodes[4].live.start, 110);
  ck_assert_int_eq(g->nodes[4].live.end, 150);
  ck_assert_int_eq(g->edges[2].a, 1);
  ck_assert_int_eq(g->edges[2].b, 3);
  ck_assert_int_eq(g->edges[2].costs[1 * 2 + 0], 20);
  ck_assert_int_eq(sp_sg_num_node_vars(g), 9);
  ck_assert_int_eq(sp_sg_num_edge_vars(g), 2 + 3 + 4 + 3 + 2);
  sp_sg_free(g);
}
END_TEST

START_TEST(example_plan_cost_and_peak_usage_are_evaluated) {
  sp_err err;
  sp_sg *g = parse(EXAMPLE, &err);
  int plan[5] = {0, 0, 2, 1, 0};
  sp_sg_eval ev;
  ck_assert_int_eq(sp_sg_evaluate(g, plan, &ev, &err), SP_OK);
  /* nodes 15+55+35+75+95, edges 30+40+10+30+60 */
  ck_assert_int_eq(ev.cost, 275 + 170);
  ck_assert(ev.valid);
  /* at t in [50, 70): 10 + 25 + 15 */
  ck_assert_int_eq(ev.peak_usage, 50);
  ck_assert_int_eq(ev.peak_time, 50);
  int dear[5] = {0, 0, 1, 1, 0}; /* node 2 uses 20 at [50, 70): 55 > 50 */
  ck_assert_int_eq(sp_sg_evaluate(g, dear, &ev, &err), SP_OK);
  ck_assert(ev.over_limit);
  ck_assert(!ev.valid);
  ck_assert_int_eq(ev.peak_usage, 55);
  int bad[5] = {0, 2, 0, 0, 0};
  ck_assert_int_eq(sp_sg_evaluate(g, bad, &ev, &err), SP_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "node 1: strategy 2 is out of range"));
  char *s = sp_sg_format_plan(g, plan);
  ck_assert_str_eq(s, "[0, 0, 2, 1, 0]");
  free(s);
  sp_sg_free(g);
}
END_TEST

START_TEST(exhaustive_finds_example_optimum_445) {
  sp_err err;
  sp_sg *g = parse(EXAMPLE, &err);
  int plan[5];
  int64_t cost;
  ck_assert_int_eq(sp_sg_solve_exhaustive(g, 1000, plan, &cost, &err), SP_OK);
  ck_assert_int_eq(cost, 445);
  bool found;
  ck_assert_int_eq(brute_force(g, &found), 445);
  sp_sg_eval ev;
  sp_sg_evaluate(g, plan, &ev, NULL);
  ck_assert(ev.valid);
  ck_assert_int_eq(ev.cost, 445);
  ck_assert_int_eq(sp_sg_solve_exhaustive(g, 10, plan, &cost, &err), SP_ELIMIT);
  sp_sg_free(g);
}
END_TEST

START_TEST(touching_intervals_do_not_overlap) {
  /* [0, 10) and [10, 20) never live together: each may use the whole limit. */
  sp_sg *g = sp_sg_new("t");
  int64_t c[1] = {0}, u[1] = {7};
  ck_assert_int_eq(sp_sg_add_node(g, 1, c, u, (sp_sg_interval){0, 10}, NULL), 0);
  ck_assert_int_eq(sp_sg_add_node(g, 1, c, u, (sp_sg_interval){10, 20}, NULL), 1);
  ck_assert_int_eq(sp_sg_add_node(g, 1, c, u, (sp_sg_interval){5, 5}, NULL), 2); /* never */
  sp_sg_set_usage_limit(g, 7, NULL);
  int plan[3] = {0, 0, 0};
  sp_sg_eval ev;
  sp_sg_evaluate(g, plan, &ev, NULL);
  ck_assert(ev.valid);
  ck_assert_int_eq(ev.peak_usage, 7);
  sp_sg_set_usage_limit(g, 6, NULL);
  sp_sg_evaluate(g, plan, &ev, NULL);
  ck_assert(!ev.valid);
  sp_sg_free(g);
}
END_TEST

START_TEST(forbidden_costs_make_plans_invalid) {
  sp_sg *g = sp_sg_new(NULL);
  int64_t c2[2] = {1, SP_SG_FORBIDDEN};
  sp_sg_add_node(g, 2, c2, NULL, (sp_sg_interval){0, 0}, NULL);
  sp_sg_add_node(g, 2, c2, NULL, (sp_sg_interval){0, 0}, NULL);
  int64_t m[4] = {SP_SG_FORBIDDEN, 5, 6, 7};
  ck_assert_int_eq(sp_sg_add_edge(g, 0, 1, m, NULL), 0);
  int plan[2] = {0, 0};
  sp_sg_eval ev;
  sp_sg_evaluate(g, plan, &ev, NULL);
  ck_assert(ev.forbidden);
  ck_assert(!ev.valid);
  int64_t cost;
  int best[2];
  /* 0,0 uses the forbidden pair; 1,x the forbidden node cost: nothing valid */
  ck_assert_int_eq(sp_sg_solve_exhaustive(g, 100, best, &cost, NULL), SP_ENOTFOUND);
  sp_sg_free(g);
}
END_TEST

START_TEST(add_functions_reject_bad_nodes_and_edges) {
  sp_err err;
  sp_sg *g = sp_sg_new(NULL);
  int64_t c[2] = {1, 2}, neg[2] = {1, -3};
  ck_assert_int_eq(sp_sg_add_node(g, 0, c, NULL, (sp_sg_interval){0, 1}, &err), SP_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "at least one"));
  ck_assert_int_eq(sp_sg_add_node(g, 2, c, NULL, (sp_sg_interval){5, 1}, &err), SP_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "start is after its end"));
  ck_assert_int_eq(sp_sg_add_node(g, 2, neg, NULL, (sp_sg_interval){0, 1}, &err), SP_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "node 0: costs[1] is -3"));
  ck_assert_int_eq(sp_sg_add_node(g, 2, c, NULL, (sp_sg_interval){0, 1}, &err), 0);
  ck_assert_int_eq(sp_sg_add_edge(g, 0, 0, c, &err), SP_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "to itself"));
  ck_assert_int_eq(sp_sg_add_edge(g, 0, 3, c, &err), SP_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "there are 1 nodes"));
  ck_assert_int_eq(sp_sg_set_usage_limit(g, -1, &err), SP_EINVAL);
  ck_assert_int_eq(g->nnodes, 1);
  ck_assert_int_eq(g->nedges, 0);
  sp_sg_free(g);
}
END_TEST

/* Usages of 2^60 bytes each: a second such node could make a live-usage sum pass what the
 * solvers count in (INT64_MAX / 4); it is refused instead of overflowing later. */
START_TEST(usages_that_could_overflow_a_live_sum_are_refused) {
  sp_err err;
  sp_sg *g = sp_sg_new(NULL);
  int64_t c[2] = {1, 2}, u[2] = {(int64_t)1 << 60, 0};
  ck_assert_int_eq(sp_sg_add_node(g, 2, c, u, (sp_sg_interval){0, 2}, &err), 0);
  ck_assert_int_eq(sp_sg_add_node(g, 2, c, u, (sp_sg_interval){1, 3}, &err), SP_ELIMIT);
  ck_assert_msg(strstr(err.msg, "node 1: the usages of one plan could add up to more than "
                       "2.306e+18 (SP_SG_MAX_USAGE_SUM)"), "%s", err.msg);
  ck_assert_int_eq(g->nnodes, 1);
  sp_sg_free(g);
}
END_TEST

/* ------------------------------------------------------------------ reader errors */

static void expect_error(const char *json, int code, const char *fragment) {
  sp_err err;
  sp_sg *g = parse(json, &err);
  ck_assert_ptr_null(g);
  ck_assert_int_eq(err.code, code);
  ck_assert_msg(strstr(err.msg, fragment) != NULL, "message \"%s\" lacks \"%s\"", err.msg,
                fragment);
}

START_TEST(reader_reports_malformed_json_with_line_and_column) {
  expect_error("{\"problem\": {\n  \"nodes\": [1, 2,,]}}", SP_EINVAL,
               "malformed JSON at line 2, column");
  expect_error("", SP_EINVAL, "malformed JSON");
}
END_TEST

START_TEST(reader_reports_edge_cost_count_mismatch) {
  expect_error("{\"problem\": {\"nodes\": {\"intervals\": [[0, 1], [0, 1]], "
               "\"costs\": [[1, 2], [3, 4, 5]], \"usages\": [[0, 0], [0, 0, 0]]}, "
               "\"edges\": {\"nodes\": [[0, 1], [1, 0]], \"costs\": [[1, 2, 3, 4, 5, 6], "
               "[1, 2, 3, 4, 5]]}}}",
               SP_EINVAL, "problem.edges.costs[1] has 5 entries, expected 3x2=6");
}
END_TEST

START_TEST(reader_reports_bad_intervals) {
  expect_error("{\"problem\": {\"nodes\": {\"intervals\": [[0, 1], [9, 3]], "
               "\"costs\": [[1], [2]], \"usages\": [[0], [0]]}}}",
               SP_EINVAL, "problem.nodes.intervals[1] is [9, 3]: start is after end");
  expect_error("{\"problem\": {\"nodes\": {\"intervals\": [[0, 1, 2]], "
               "\"costs\": [[1]], \"usages\": [[0]]}}}",
               SP_EINVAL, "problem.nodes.intervals[0] is an array of the wrong length");
  expect_error("{\"problem\": {\"nodes\": {\"intervals\": [[0, 1.5]], "
               "\"costs\": [[1]], \"usages\": [[0]]}}}",
               SP_EINVAL, "problem.nodes.intervals[0][1] is not an exact integer");
}
END_TEST

START_TEST(reader_reports_count_and_value_errors) {
  expect_error("{\"problem\": {\"nodes\": {\"intervals\": [[0, 1]], "
               "\"costs\": [[1], [2]], \"usages\": [[0], [0]]}}}",
               SP_EINVAL, "problem.nodes.intervals has 1 entries but problem.nodes.costs has 2");
  expect_error("{\"problem\": {\"nodes\": {\"intervals\": [[0, 1]], "
               "\"costs\": [[1, 2]], \"usages\": [[0]]}}}",
               SP_EINVAL, "problem.nodes.usages[0] has 1 entries but problem.nodes.costs[0] has 2");
  expect_error("{\"problem\": {\"nodes\": {\"intervals\": [[0, 1]], "
               "\"costs\": [[1, -2]], \"usages\": [[0, 0]]}}}",
               SP_EINVAL, "problem.nodes.costs[0][1] is -2, expected a non-negative integer");
  expect_error("{\"problem\": {\"nodes\": {\"intervals\": [[0, 1]], "
               "\"costs\": [[1, \"x\"]], \"usages\": [[0, 0]]}}}",
               SP_EINVAL, "problem.nodes.costs[0][1] is a string");
  expect_error("{\"problem\": {\"nodes\": {\"intervals\": [[0, 1]], "
               "\"costs\": [[]], \"usages\": [[]]}}}",
               SP_EINVAL, "problem.nodes.costs[0] is empty");
  expect_error("{\"problem\": {\"nodes\": {\"intervals\": [[0, 1]], "
               "\"costs\": [[1]], \"usages\": [[0]]}, \"edges\": {\"nodes\": [[0, 4]], "
               "\"costs\": [[1]]}}}",
               SP_EINVAL, "problem.edges.nodes[0][1] is 4, but there are 1 nodes");
  expect_error("{\"problem\": {\"nodes\": {\"intervals\": [[0, 1]], "
               "\"costs\": [[1]], \"usages\": [[0]]}, \"edges\": {\"nodes\": [[0, 0]], "
               "\"costs\": [[1]]}}}",
               SP_EINVAL, "problem.edges.nodes[0] joins node 0 to itself");
  expect_error("{\"problem\": {\"nodes\": {\"intervals\": [[0, 1]], "
               "\"costs\": [[123456789012345678]], \"usages\": [[0]]}}}",
               SP_EINVAL, "above 2^53");
  expect_error("{\"problem\": {\"nodes\": {\"intervals\": [[0, 1]], "
               "\"costs\": [[1]], \"usages\": [[0]]}, \"usage_limit\": -5}}",
               SP_EINVAL, "problem.usage_limit is -5");
  expect_error("{\"nodes\": {}}", SP_EINVAL, "no \"problem\" object at the top level");
  expect_error("[1]", SP_EINVAL, "the top level is an array, expected an object");
  expect_error("{\"problem\": {\"nodes\": {\"costs\": [[1]], \"usages\": [[0]]}}}",
               SP_EINVAL, "problem.nodes.intervals is missing, expected an array");
}
END_TEST

START_TEST(reader_maps_1e18_to_forbidden_and_keeps_missing_limit) {
  sp_err err;
  sp_sg *g = parse("{\"problem\": {\"nodes\": {\"intervals\": [[0, 1]], "
                   "\"costs\": [[1, 1e18, 2e18]], \"usages\": [[0, 0, 0]]}}}", &err);
  ck_assert_msg(g != NULL, "%s", err.msg);
  ck_assert_int_eq(g->nodes[0].costs[1], SP_SG_FORBIDDEN);
  ck_assert_int_eq(g->nodes[0].costs[2], SP_SG_FORBIDDEN);
  ck_assert_int_eq(g->usage_limit, SP_SG_NO_LIMIT);
  ck_assert_int_eq(g->nedges, 0);
  sp_sg_free(g);
}
END_TEST

/* Writes `text` to a temporary file, gzip-compressed when `gz`; returns its path. */
static char *temp_file(const char *text, bool gz) {
  static char path[64];
  snprintf(path, sizeof path, "/tmp/sp_sg_test_XXXXXX");
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  close(fd);
  if (gz) {
    gzFile f = gzopen(path, "wb");
    gzwrite(f, text, (unsigned)strlen(text));
    gzclose(f);
  } else {
    FILE *f = fopen(path, "wb");
    fwrite(text, 1, strlen(text), f);
    fclose(f);
  }
  return path;
}

START_TEST(reader_reads_plain_and_gzip_files_alike) {
  for (int gz = 0; gz < 2; gz++) {
    char *path = temp_file(EXAMPLE, gz);
    sp_err err;
    sp_sg *g = NULL;
    ck_assert_int_eq(sp_iopddl_read_file(path, &g, &err), SP_OK);
    ck_assert_int_eq(g->nnodes, 5);
    ck_assert_int_eq(g->edges[4].costs[1], 60);
    sp_sg_free(g);
    unlink(path);
  }
}
END_TEST

START_TEST(reader_names_the_file_in_errors) {
  char *path = temp_file("{\"problem\": 3}", true);
  sp_err err;
  sp_sg *g = NULL;
  ck_assert_int_eq(sp_iopddl_read_file(path, &g, &err), SP_EINVAL);
  ck_assert_ptr_nonnull(strstr(err.msg, path));
  ck_assert_ptr_nonnull(strstr(err.msg, "problem is a number, expected an object"));
  unlink(path);
  ck_assert_int_eq(sp_iopddl_read_file("/nonexistent/p.json", &g, &err), SP_EIO);
  ck_assert_ptr_nonnull(strstr(err.msg, "/nonexistent/p.json: cannot open"));
  ck_assert_ptr_null(g);
}
END_TEST

/* ------------------------------------------------------------------ exhaustive oracle */

static uint64_t rng_state;
static int rnd(int n) {
  rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (int)((rng_state >> 33) % (uint64_t)n);
}

START_TEST(exhaustive_search_agrees_with_enumeration_on_random_graphs) {
  rng_state = 12345;
  for (int round = 0; round < 40; round++) {
    sp_sg *g = sp_sg_new(NULL);
    int n = 1 + rnd(7);
    for (int i = 0; i < n; i++) {
      int k = 1 + rnd(3);
      int64_t c[3], u[3];
      for (int j = 0; j < k; j++) {
        c[j] = rnd(10) == 0 ? SP_SG_FORBIDDEN : rnd(50);
        u[j] = rnd(10);
      }
      int s = rnd(10);
      sp_sg_add_node(g, k, c, u, (sp_sg_interval){s, s + rnd(6)}, NULL);
    }
    for (int e = 0; e < n; e++) {
      int a = rnd(n), b = rnd(n);
      if (a == b) continue;
      int64_t m[9];
      for (int j = 0; j < g->nodes[a].nstrat * g->nodes[b].nstrat; j++)
        m[j] = rnd(12) == 0 ? SP_SG_FORBIDDEN : rnd(30);
      sp_sg_add_edge(g, a, b, m, NULL);
    }
    if (rnd(3)) sp_sg_set_usage_limit(g, 5 + rnd(20), NULL);
    bool found;
    int64_t want = brute_force(g, &found);
    int plan[8];
    int64_t got;
    int rc = sp_sg_solve_exhaustive(g, 1 << 20, plan, &got, NULL);
    ck_assert_int_eq(rc, found ? SP_OK : SP_ENOTFOUND);
    if (found) {
      ck_assert_int_eq(got, want);
      sp_sg_eval ev;
      sp_sg_evaluate(g, plan, &ev, NULL);
      ck_assert(ev.valid);
      ck_assert_int_eq(ev.cost, want);
    }
    sp_sg_free(g);
  }
}
END_TEST

static Suite *strategy_graph_suite(void) {
  Suite *s = suite_create("strategy_graph");
  TCase *tc = tcase_create("graph");
  tcase_add_test(tc, example_parses_with_its_counts_and_limit);
  tcase_add_test(tc, example_plan_cost_and_peak_usage_are_evaluated);
  tcase_add_test(tc, exhaustive_finds_example_optimum_445);
  tcase_add_test(tc, touching_intervals_do_not_overlap);
  tcase_add_test(tc, forbidden_costs_make_plans_invalid);
  tcase_add_test(tc, add_functions_reject_bad_nodes_and_edges);
  tcase_add_test(tc, usages_that_could_overflow_a_live_sum_are_refused);
  tcase_add_test(tc, exhaustive_search_agrees_with_enumeration_on_random_graphs);
  suite_add_tcase(s, tc);
  TCase *rd = tcase_create("reader");
  tcase_add_test(rd, reader_reports_malformed_json_with_line_and_column);
  tcase_add_test(rd, reader_reports_edge_cost_count_mismatch);
  tcase_add_test(rd, reader_reports_bad_intervals);
  tcase_add_test(rd, reader_reports_count_and_value_errors);
  tcase_add_test(rd, reader_maps_1e18_to_forbidden_and_keeps_missing_limit);
  tcase_add_test(rd, reader_reads_plain_and_gzip_files_alike);
  tcase_add_test(rd, reader_names_the_file_in_errors);
  suite_add_tcase(s, rd);
  return s;
}

int main(void) { return sp_test_run(strategy_graph_suite()); }
