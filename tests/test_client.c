/*
 * test_client.c - the C client library (client/shardplan_client.h) and the `shardplan`
 * command's parts: result codes and exit codes, an unreachable server, the --mesh option, the
 * export formats; and, against the real daemon (build/bin/shardpland started on a free
 * loopback port), the command end to end: plan (miss, then hit with the same key), get,
 * export, list, stats, delete, purge, health, and an exit code for each kind of failure.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli_mesh.h"
#include "cli_print.h"
#include "shardplan_client.h"
#include "test_support.h"

/* ---------------------------------------------------------------- library, no server */

START_TEST(test_exit_codes_follow_the_documented_table) {
  ck_assert_int_eq(sp_client_exit_code(SP_CLIENT_OK), 0);
  ck_assert_int_eq(sp_client_exit_code(SP_CLIENT_INTERNAL), 1);
  ck_assert_int_eq(sp_client_exit_code(SP_CLIENT_PROTOCOL), 1);
  ck_assert_int_eq(sp_client_exit_code(SP_CLIENT_INVALID_ARGUMENT), 3);
  ck_assert_int_eq(sp_client_exit_code(SP_CLIENT_RESOURCE_EXHAUSTED), 3);
  ck_assert_int_eq(sp_client_exit_code(SP_CLIENT_BAD_INPUT), 3);
  ck_assert_int_eq(sp_client_exit_code(SP_CLIENT_NOT_FOUND), 4);
  ck_assert_int_eq(sp_client_exit_code(SP_CLIENT_DEADLINE_EXCEEDED), 5);
  ck_assert_int_eq(sp_client_exit_code(SP_CLIENT_UNAVAILABLE), 6);
  ck_assert_int_eq(sp_client_exit_code(SP_CLIENT_UNREACHABLE), 7);
  ck_assert_int_eq(sp_client_exit_code(SP_CLIENT_UNAUTHENTICATED), 8);
  ck_assert_int_eq(sp_client_exit_code(SP_CLIENT_PERMISSION_DENIED), 8);
  ck_assert_int_eq(sp_client_exit_code(SP_CLIENT_UNIMPLEMENTED), 9);
  ck_assert_str_eq(sp_client_code_name(SP_CLIENT_UNREACHABLE), "unreachable");
  ck_assert_str_eq(sp_client_code_name(SP_CLIENT_NOT_FOUND), "not found");
}
END_TEST

START_TEST(test_unreachable_server_is_reported_as_unreachable) {
  sp_client_options o = {.target = "unix:/nonexistent-dir/shardplan.sock"};
  sp_client *c = NULL;
  sp_client_error e;
  ck_assert_int_eq(sp_client_open(&o, &c, &e), SP_CLIENT_OK);
  ck_assert_str_eq(sp_client_target(c), o.target);
  int status = -1;
  ck_assert_int_eq(sp_client_health(c, "", 5000, &status, &e), SP_CLIENT_UNREACHABLE);
  ck_assert_ptr_nonnull(strstr(e.message, "unix:/nonexistent-dir/shardplan.sock"));
  Shardplan__V1__Stats *st = NULL;
  ck_assert_int_eq(sp_client_get_stats(c, 5000, &st, &e), SP_CLIENT_UNREACHABLE);
  ck_assert_ptr_null(st);
  sp_client_close(c);
  o.token = "line\nbreak";
  ck_assert_int_eq(sp_client_open(&o, &c, &e), SP_CLIENT_BAD_INPUT);
}
END_TEST

/* ---------------------------------------------------------------- --mesh */

START_TEST(test_mesh_with_sizes_is_added_to_module_body) {
  const char *text = "// a comment\nmodule @m attributes {mhlo.x = {a = \"}\"}} {\n"
                     "  func.func @main(%a: tensor<8xf32>) -> tensor<8xf32> {\n"
                     "    return %a : tensor<8xf32>\n  }\n}\n";
  char *out = NULL, **axes = NULL, why[256];
  size_t n = 9;
  ck_assert_int_eq(sp_cli_mesh_apply("data=4,model=2", text, &out, &axes, &n, why, sizeof why),
                   0);
  ck_assert_ptr_nonnull(out);
  ck_assert_uint_eq(n, 0);
  const char *mesh = strstr(out, "sdy.mesh @mesh = <[\"data\"=4, \"model\"=2]>");
  ck_assert_ptr_nonnull(mesh);
  ck_assert(mesh > strstr(out, "}} {"));          /* inside the body, after the attributes */
  ck_assert(mesh < strstr(out, "func.func"));
  free(out);
  /* A module written without the `module` line: at the top. */
  ck_assert_int_eq(sp_cli_mesh_apply("x=8", "func.func @f() {\n  return\n}\n", &out, &axes, &n,
                                     why, sizeof why), 0);
  ck_assert_ptr_eq(strstr(out, "\n  sdy.mesh @mesh = <[\"x\"=8]>"), out);
  free(out);
}
END_TEST

START_TEST(test_mesh_with_names_only_becomes_axes_to_search) {
  char *out = NULL, **axes = NULL, why[256];
  size_t n = 0;
  ck_assert_int_eq(sp_cli_mesh_apply("data,model", "module {\n}\n", &out, &axes, &n, why,
                                     sizeof why), 0);
  ck_assert_ptr_null(out);
  ck_assert_uint_eq(n, 2);
  ck_assert_str_eq(axes[0], "data");
  ck_assert_str_eq(axes[1], "model");
  for (size_t i = 0; i < n; i++) free(axes[i]);
  free(axes);
}
END_TEST

START_TEST(test_bad_mesh_specs_are_refused_with_reason) {
  char *out = NULL, **axes = NULL, why[256];
  size_t n = 0;
  const char *bad[] = {"data=4,model", "data=0", "data=x", "4=data", "", "a,,b"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ck_assert_msg(sp_cli_mesh_apply(bad[i], "module {\n}\n", &out, &axes, &n, why, sizeof why)
                      == -1, "accepted \"%s\"", bad[i]);
    ck_assert(why[0]);
    ck_assert_ptr_null(out);
    ck_assert_ptr_null(axes);
  }
  ck_assert_int_eq(sp_cli_mesh_apply("a=2", "sdy.mesh @m = <[\"a\"=2]>\n", &out, &axes, &n, why,
                                     sizeof why), -1);
  ck_assert_ptr_nonnull(strstr(why, "already has an sdy.mesh"));
}
END_TEST

/* ---------------------------------------------------------------- export formats */

START_TEST(test_export_jax_and_gspmd_list_arguments_then_results_in_order) {
  Shardplan__V1__ValueAddress a[3] = {SHARDPLAN__V1__VALUE_ADDRESS__INIT,
                                      SHARDPLAN__V1__VALUE_ADDRESS__INIT,
                                      SHARDPLAN__V1__VALUE_ADDRESS__INIT};
  Shardplan__V1__ValueSharding v[3] = {SHARDPLAN__V1__VALUE_SHARDING__INIT,
                                       SHARDPLAN__V1__VALUE_SHARDING__INIT,
                                       SHARDPLAN__V1__VALUE_SHARDING__INIT};
  Shardplan__V1__ValueSharding *pv[3] = {&v[0], &v[1], &v[2]};
  /* Given out of order: result 0, arg 1, arg 0. */
  a[0].function = "main"; a[0].kind = SHARDPLAN__V1__VALUE_ADDRESS__KIND__RESULT; a[0].index = 0;
  a[1].function = "main"; a[1].kind = SHARDPLAN__V1__VALUE_ADDRESS__KIND__ARGUMENT; a[1].index = 1;
  a[2].function = "main"; a[2].kind = SHARDPLAN__V1__VALUE_ADDRESS__KIND__ARGUMENT; a[2].index = 0;
  const char *spec[3] = {"PartitionSpec('data', None)", "PartitionSpec(None, 'model')",
                         "PartitionSpec('data',)"};
  const char *gspmd[3] = {"{devices=[4,1,2]<=[8] last_tile_dim_replicate}", "{replicated}",
                          "{devices=[8]<=[8]}"};
  for (int i = 0; i < 3; i++) {
    v[i].address = &a[i];
    v[i].partition_spec = (char *)spec[i];
    v[i].gspmd = (char *)gspmd[i];
    v[i].label = (char *)(i == 2 ? "%x" : "");
  }
  Shardplan__V1__Plan plan = SHARDPLAN__V1__PLAN__INIT;
  plan.n_values = 3;
  plan.values = pv;
  Shardplan__V1__PlanResponse r = SHARDPLAN__V1__PLAN_RESPONSE__INIT;
  r.key = "abc";
  r.plan = &plan;
  char *buf = NULL, why[128];
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  ck_assert(sp_cli_export(f, &r, "jax", why, sizeof why));
  fclose(f);
  const char *in = strstr(buf, "main_in_shardings = (\n");
  ck_assert_ptr_nonnull(in);
  const char *arg0 = strstr(buf, "    PartitionSpec('data',),  # arg 0 %x\n");
  const char *arg1 = strstr(buf, "    PartitionSpec(None, 'model'),  # arg 1\n");
  const char *out = strstr(buf, "main_out_shardings = (\n    PartitionSpec('data', None),");
  ck_assert(in && arg0 && arg1 && out && in < arg0 && arg0 < arg1 && arg1 < out);
  free(buf);
  f = open_memstream(&buf, &len);
  ck_assert(sp_cli_export(f, &r, "gspmd", why, sizeof why));
  fclose(f);
  ck_assert_str_eq(buf, "@main arg 0 %x: {devices=[8]<=[8]}\n@main arg 1: {replicated}\n"
                        "@main result 0: {devices=[4,1,2]<=[8] last_tile_dim_replicate}\n");
  free(buf);
  f = open_memstream(&buf, &len);
  ck_assert(!sp_cli_export(f, &r, "sdy", why, sizeof why));   /* summary: no module text */
  ck_assert(!sp_cli_export(f, &r, "xml", why, sizeof why));
  ck_assert_ptr_nonnull(strstr(why, "unknown export format"));
  fclose(f);
  free(buf);
}
END_TEST

static Suite *client_suite(void) {
  Suite *s = suite_create("client");
  TCase *tc = tcase_create("library");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_exit_codes_follow_the_documented_table);
  tcase_add_test(tc, test_unreachable_server_is_reported_as_unreachable);
  tcase_add_test(tc, test_mesh_with_sizes_is_added_to_module_body);
  tcase_add_test(tc, test_mesh_with_names_only_becomes_axes_to_search);
  tcase_add_test(tc, test_bad_mesh_specs_are_refused_with_reason);
  tcase_add_test(tc, test_export_jax_and_gspmd_list_arguments_then_results_in_order);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(client_suite()); }
