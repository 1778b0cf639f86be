/*
 * test_iopddl.c - the solver and shardplan-solve on the public IOPDDL contest files
 * (shared/benchmarks/iopddl; skipped with exit 77 when absent).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "solver/solver.h"
#include "test_support.h"

#define DIR "benchmarks/iopddl/"

static sp_sg *load(const char *file) {
  sp_err err;
  sp_sg *g = NULL;
  int rc = sp_iopddl_read_file(sp_test_shared_path(file), &g, &err);
  ck_assert_msg(rc == SP_OK, "%s", err.msg);
  return g;
}

START_TEST(example_optimum_is_445_by_exhaustive_search_and_by_the_solver) {
  sp_sg *g = load(DIR "example.json");
  int plan[5];
  int64_t want;
  ck_assert_int_eq(sp_sg_solve_exhaustive(g, 1000, plan, &want, NULL), SP_OK);
  ck_assert_int_eq(want, 445);
  sp_sg_opts o;
  sp_sg_opts_init(&o);
  sp_sg_result r;
  ck_assert_int_eq(sp_sg_solve(g, &o, &r, NULL), SP_OK);
  ck_assert_int_eq(r.status, SP_SG_OPTIMAL);
  ck_assert_int_eq(r.cost, 445);
  int expect[5] = {0, 0, 2, 1, 0}; /* the only plan of cost 445 */
  for (int i = 0; i < 5; i++) ck_assert_int_eq(r.choice[i], expect[i]);
  sp_sg_result_free(&r);
  sp_sg_free(g);
}
END_TEST

START_TEST(contest_problems_load_with_their_published_sizes) {
  static const struct {
    const char *file;
    int nodes, edges;
    int64_t limit;
  } want[] = {{DIR "asplos-2025-iopddl-B.json.gz", 816, 1096, 14392528},
              {DIR "asplos-2025-iopddl-G.json.gz", 816, 1023, 14392528},
              {DIR "asplos-2025-iopddl-V.json.gz", 816, 1023, 14392528},
              {DIR "asplos-2025-iopddl-P.json.gz", 65335, 100547, 179269173248LL}};
  for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
    sp_sg *g = load(want[k].file);
    ck_assert_int_eq(g->nnodes, want[k].nodes);
    ck_assert_int_eq(g->nedges, want[k].edges);
    ck_assert_int_eq(g->usage_limit, want[k].limit);
    sp_sg_free(g);
  }
}
END_TEST

START_TEST(iopddl_B_is_solved_to_its_known_optimum_532843) {
  sp_sg *g = load(DIR "asplos-2025-iopddl-B.json.gz");
  sp_sg_opts o;
  sp_sg_opts_init(&o); /* no time limit: the run ends on the proof */
  sp_sg_result r;
  sp_err err;
  ck_assert_int_eq(sp_sg_solve(g, &o, &r, &err), SP_OK);
  ck_assert_int_eq(r.status, SP_SG_OPTIMAL);
  ck_assert_int_eq(r.cost, 532843);
  ck_assert_int_eq(r.bound, 532843);
  sp_sg_eval ev;
  sp_sg_evaluate(g, r.choice, &ev, NULL);
  ck_assert(ev.valid);
  ck_assert_int_eq(ev.cost, 532843);
  sp_sg_result_free(&r);
  sp_sg_free(g);
}
END_TEST

START_TEST(a_short_time_limit_still_returns_a_valid_plan_with_its_gap) {
  sp_sg *g = load(DIR "asplos-2025-iopddl-V.json.gz");
  sp_sg_opts o;
  sp_sg_opts_init(&o);
  o.time_limit = 1.0;
  sp_sg_result r;
  ck_assert_int_eq(sp_sg_solve(g, &o, &r, NULL), SP_OK);
  ck_assert(r.has_plan);
  ck_assert(r.status == SP_SG_TIMEOUT || r.status == SP_SG_FEASIBLE);
  sp_sg_eval ev;
  sp_sg_evaluate(g, r.choice, &ev, NULL);
  ck_assert(ev.valid);
  ck_assert_int_eq(ev.cost, r.cost);
  ck_assert(r.bound != INT64_MIN);
  ck_assert_int_le(r.bound, r.cost);
  ck_assert(r.gap > 0 && r.gap <= 1);
  ck_assert(r.gap == (double)(r.cost - r.bound) / (double)r.cost);
  sp_sg_result_free(&r);
  sp_sg_free(g);
}
END_TEST

/* Runs shardplan-solve with `args`; returns its exit status and captures stdout/stderr. */
static int run_tool(const char *args, char *out, size_t nout, char *errs, size_t nerr) {
  char cmd[8192], ofile[] = "/tmp/sp_solve_out_XXXXXX", efile[] = "/tmp/sp_solve_err_XXXXXX";
  close(mkstemp(ofile));
  close(mkstemp(efile));
  snprintf(cmd, sizeof cmd, "%s/shardplan-solve %s > %s 2> %s", SP_BIN_DIR, args, ofile, efile);
  int st = system(cmd);
  size_t len;
  char *o = sp_test_read_file(ofile, &len), *e = sp_test_read_file(efile, &len);
  snprintf(out, nout, "%s", o ? o : "");
  snprintf(errs, nerr, "%s", e ? e : "");
  free(o);
  free(e);
  unlink(ofile);
  unlink(efile);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

START_TEST(shardplan_solve_prints_the_plan_and_rejects_bad_input) {
  char cmd[4096], out[4096], errs[4096];
  snprintf(cmd, sizeof cmd, "%s 5", sp_test_shared_path(DIR "example.json"));
  ck_assert_int_eq(run_tool(cmd, out, sizeof out, errs, sizeof errs), 0);
  ck_assert_str_eq(out, "[0, 0, 2, 1, 0]\n");
  ck_assert_ptr_nonnull(strstr(errs, "cost 445"));
  ck_assert_ptr_nonnull(strstr(errs, "status optimal"));
  ck_assert_int_eq(run_tool("/nonexistent/p.json 5", out, sizeof out, errs, sizeof errs), 2);
  ck_assert_ptr_nonnull(strstr(errs, "/nonexistent/p.json: cannot open"));
  char bad[] = "/tmp/sp_bad_XXXXXX";
  int fd = mkstemp(bad);
  ck_assert_int_eq(write(fd, "{\"problem\": {\"nodes\": 7}}", 26), 26);
  close(fd);
  snprintf(cmd, sizeof cmd, "%s 5", bad);
  ck_assert_int_eq(run_tool(cmd, out, sizeof out, errs, sizeof errs), 2);
  ck_assert_ptr_nonnull(strstr(errs, "problem.nodes is a number, expected an object"));
  unlink(bad);
  snprintf(cmd, sizeof cmd, "%s 0", sp_test_shared_path(DIR "example.json"));
  ck_assert_int_eq(run_tool(cmd, out, sizeof out, errs, sizeof errs), 2);
  ck_assert_ptr_nonnull(strstr(errs, "SECONDS must be a positive number"));
}
END_TEST

static Suite *iopddl_suite(void) {
  Suite *s = suite_create("iopddl");
  TCase *tc = tcase_create("contest");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, example_optimum_is_445_by_exhaustive_search_and_by_the_solver);
  tcase_add_test(tc, contest_problems_load_with_their_published_sizes);
  tcase_add_test(tc, iopddl_B_is_solved_to_its_known_optimum_532843);
  tcase_add_test(tc, a_short_time_limit_still_returns_a_valid_plan_with_its_gap);
  tcase_add_test(tc, shardplan_solve_prints_the_plan_and_rejects_bad_input);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  sp_test_require_shared(DIR "example.json");
  return sp_test_run(iopddl_suite());
}
