/*
 * test_report.c - the propagation report (propagation/report.h): a dot_general whose two
 * operands both want axis "a" on their free dims is a conflict; the JSON names the op, the
 * factor, the cause, which factor held the axis, the strategy level and the resolution, and
 * shows the factor tables before and after. Also: erased ops, ops without a common mesh, and
 * shardplan-opt -report-json writing one entry per chunk.
 */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ir/ir.h"
#include "mlir/mlir.h"
#include "propagation/conflict.h"
#include "propagation/prop_passes.h"
#include "propagation/report.h"
#include "test_support.h"

static const char *const conflict_module =
    "sdy.mesh @m = <[\"a\"=2, \"b\"=2]>\n"
    "func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@m, [{\"a\"}, {?}]>}, "
    "%arg1: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@m, [{?}, {\"a\"}]>}) -> tensor<8x8xf32> {\n"
    "  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>\n"
    "  %1 = stablehlo.abs %arg0 : tensor<8x16xf32>\n"
    "  return %0 : tensor<8x8xf32>\n"
    "}\n";

static sp_module *M;
static sp_arena *A;
static sp_conflict_log LOG;
static cJSON *J;

static void setup(void) {
  sp_err err;
  ck_assert_int_eq(sp_mlir_parse(conflict_module, strlen(conflict_module), "t.mlir", 1, &M, &err),
                   SP_OK);
  A = sp_arena_new(0);
  sp_conflict_log_init(&LOG, A);
  M->conflicts = &LOG;
  J = NULL;
}

static void teardown(void) {
  cJSON_Delete(J);
  sp_arena_free(A);
  sp_module_free(M);
}

/* Runs `pass` between report begin and end; J gets the report. */
static void report_around(int (*pass)(sp_module *, const char *, sp_err *)) {
  sp_prop_report *r;
  sp_err err;
  ck_assert_int_eq(sp_prop_report_begin(M, false, &r, &err), SP_OK);
  ck_assert_msg(pass(M, NULL, &err) == SP_OK, "%s", err.msg);
  ck_assert_int_eq(sp_prop_report_end(r, &LOG, &J, &err), SP_OK);
  sp_prop_report_free(r);
}

static const char *str(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  ck_assert_msg(cJSON_IsString(v), "%s is not a string", k);
  return v->valuestring;
}

static const cJSON *item(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  ck_assert_msg(v != NULL, "no %s", k);
  return v;
}

/* The report entry of the op named `name`. */
static const cJSON *op_entry(const cJSON *report, const char *name) {
  const cJSON *ops = item(report, "ops"), *o;
  cJSON_ArrayForEach(o, ops) if (strcmp(str(o, "name"), name) == 0) return o;
  ck_abort_msg("no report entry for %s", name);
  return NULL;
}

/* The conflict record of factor `factor` of the dot (the first one for it). */
static const cJSON *conflict_for(const cJSON *report, const char *factor) {
  const cJSON *c;
  cJSON_ArrayForEach(c, item(report, "conflicts")) {
    if (strcmp(str(c, "op_name"), "stablehlo.dot_general") == 0 &&
        strcmp(str(c, "factor"), factor) == 0)
      return c;
  }
  return NULL;
}

/* The axes of `tensor`'s cell for factor index `f` in a factor table, as "a,b" ("-" if the
 * tensor does not have the factor). */
static const char *cell(const cJSON *table, const char *tensor, int f) {
  static char buf[64];
  const cJSON *t;
  cJSON_ArrayForEach(t, item(table, "tensors")) {
    if (strcmp(str(t, "tensor"), tensor) != 0) continue;
    const cJSON *c = cJSON_GetArrayItem(item(t, "cells"), f);
    if (!c || cJSON_IsNull(c)) return "-";
    buf[0] = '\0';
    const cJSON *a;
    cJSON_ArrayForEach(a, item(c, "axes")) {
      if (buf[0]) strcat(buf, ",");
      strcat(buf, a->valuestring);
    }
    return buf;
  }
  ck_abort_msg("no tensor %s", tensor);
  return NULL;
}

START_TEST(basic_report_names_the_conflict_its_cause_and_that_nothing_moved) {
  report_around(sp_prop_pass_basic);
  const cJSON *dot = op_entry(J, "stablehlo.dot_general");
  ck_assert_str_eq(str(dot, "rule"),
                   "#sdy.op_sharding_rule<([i, k], [k, j])->([i, j]) {i=8, j=8, k=16} reduction={k}>");
  ck_assert_int_eq(item(dot, "line")->valueint, 3);
  ck_assert(cJSON_IsFalse(item(dot, "erased")));
  /* Before and after: operand 0 holds "a" on i, operand 1 on j, the result nothing. */
  const cJSON *before = item(dot, "before"), *after = item(dot, "after");
  ck_assert_str_eq(cell(before, "operand 0", 0), "a");
  ck_assert_str_eq(cell(before, "operand 1", 1), "a");
  ck_assert_str_eq(cell(after, "result 0", 0), "");
  ck_assert_str_eq(cell(after, "result 0", 1), "");
  ck_assert_str_eq(cell(after, "operand 0", 1), "-");

  const cJSON *ci = conflict_for(J, "i");
  ck_assert_ptr_nonnull(ci);
  ck_assert_str_eq(str(ci, "level"), "basic");
  ck_assert_str_eq(str(ci, "resolution"), "nothing_moved");
  ck_assert_int_eq(item(ci, "line")->valueint, 3);
  ck_assert_str_eq(cJSON_GetArrayItem(item(ci, "causes"), 0)->valuestring, "axis_in_use");
  /* Operand 1 blocks i: it uses "a" for j. */
  const cJSON *t;
  bool found = false;
  cJSON_ArrayForEach(t, item(ci, "tensors")) {
    if (strcmp(str(t, "tensor"), "operand 1") != 0) continue;
    ck_assert_str_eq(str(t, "blocking_factor"), "j");
    found = true;
  }
  ck_assert(found);
  ck_assert_ptr_nonnull(conflict_for(J, "j"));
}
END_TEST

START_TEST(aggressive_report_shows_the_winning_factor_in_the_after_table) {
  report_around(sp_prop_pass_aggressive);
  const cJSON *dot = op_entry(J, "stablehlo.dot_general");
  /* Factor i (first among equals) took "a" in the result; j lost it there. */
  ck_assert_str_eq(cell(item(dot, "after"), "result 0", 0), "a");
  ck_assert_str_eq(cell(item(dot, "after"), "result 0", 1), "");
  const cJSON *cj = conflict_for(J, "j");
  ck_assert_ptr_nonnull(cj);
  ck_assert_str_eq(str(cj, "level"), "aggressive");
  ck_assert_str_eq(str(cj, "source"), "operand 1");
  const cJSON *t;
  bool found = false;
  cJSON_ArrayForEach(t, item(cj, "tensors")) {
    if (strcmp(str(t, "tensor"), "result 0") != 0) continue;
    ck_assert_str_eq(str(t, "blocking_factor"), "i");
    found = true;
  }
  ck_assert(found);
  /* The user's op-priority/user-priority rounds are not involved in this pass. */
  ck_assert_int_eq(item(cj, "round")->valueint, -1);
}
END_TEST

START_TEST(erased_ops_are_marked_and_have_no_after_table) {
  report_around(sp_prop_pass_basic);
  const cJSON *abs = op_entry(J, "stablehlo.abs");
  ck_assert(cJSON_IsTrue(item(abs, "erased")));
  ck_assert(cJSON_IsNull(item(abs, "after")));
  ck_assert(!cJSON_IsNull(item(abs, "before")));
}
END_TEST

START_TEST(ops_without_a_sharded_tensor_have_null_tables) {
  sp_module_free(M);
  const char *text = "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
                     "  %0 = stablehlo.negate %a : tensor<4xf32>\n"
                     "  return %0 : tensor<4xf32>\n"
                     "}\n";
  sp_err err;
  ck_assert_int_eq(sp_mlir_parse(text, strlen(text), "t.mlir", 1, &M, &err), SP_OK);
  M->conflicts = &LOG;
  report_around(sp_prop_pass_basic);
  const cJSON *neg = op_entry(J, "stablehlo.negate");
  ck_assert(cJSON_IsNull(item(neg, "before")));
  ck_assert(cJSON_IsNull(item(neg, "after")));
  ck_assert_int_eq(cJSON_GetArraySize(item(J, "conflicts")), 0);
}
END_TEST

/* ------------------------------------------------------------------ shardplan-opt */

START_TEST(tool_writes_one_report_per_chunk) {
  char dir[] = "/tmp/sp_report_test_XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char path[512], cmd[2048];
  snprintf(path, sizeof path, "%s/in.mlir", dir);
  FILE *f = fopen(path, "wb");
  ck_assert_ptr_nonnull(f);
  fprintf(f, "%s// -----\n%s", conflict_module, conflict_module);
  fclose(f);
  snprintf(cmd, sizeof cmd,
           "cd '%s' && '%s/shardplan-opt' in.mlir -split-input-file -sdy-basic-propagate "
           "-report-json=rep.json > out.txt 2> err.txt",
           dir, SP_BIN_DIR);
  int st = system(cmd);
  ck_assert(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
  snprintf(path, sizeof path, "%s/rep.json", dir);
  char *text = sp_test_read_file(path, NULL);
  ck_assert_ptr_nonnull(text);
  cJSON *root = cJSON_Parse(text);
  free(text);
  ck_assert_ptr_nonnull(root);
  const cJSON *mods = item(root, "modules");
  ck_assert_int_eq(cJSON_GetArraySize(mods), 2);
  const cJSON *second = cJSON_GetArrayItem(mods, 1);
  ck_assert_ptr_nonnull(conflict_for(second, "i"));
  /* Places point into the whole file: the second chunk's dot is on line 10. */
  ck_assert_int_eq(item(op_entry(second, "stablehlo.dot_general"), "line")->valueint, 10);
  cJSON_Delete(root);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  ck_assert_int_eq(system(cmd), 0);
}
END_TEST

static Suite *report_suite(void) {
  Suite *s = suite_create("report");
  TCase *tc = tcase_create("library");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, basic_report_names_the_conflict_its_cause_and_that_nothing_moved);
  tcase_add_test(tc, aggressive_report_shows_the_winning_factor_in_the_after_table);
  tcase_add_test(tc, erased_ops_are_marked_and_have_no_after_table);
  tcase_add_test(tc, ops_without_a_sharded_tensor_have_null_tables);
  suite_add_tcase(s, tc);
  tc = tcase_create("tool");
  tcase_add_test(tc, tool_writes_one_report_per_chunk);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(report_suite()); }
