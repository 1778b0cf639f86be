/*
 * test_client.c - the C client library (client/shardplan_client.h) and the `shardplan`
 * command's parts: result codes and exit codes, an unreachable server, the --mesh option, the
 * export formats; and, against the real daemon (build/bin/shardpland started on a free
 * loopback port by the daemon suites' harness, tests/support/daemon_harness.h), the command
 * end to end: plan (miss, then hit with the same key), get, export, list, stats, delete,
 * purge, health, an exit code for each kind of failure, the bearer token, a busy daemon
 * (UNAVAILABLE with its retry hint) while a PlanStream search reports progress, and one
 * client shared by threads.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
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
#include "daemon_harness.h"
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


/* ---------------------------------------------------------------- the command, real daemon */

typedef struct cli_run {
  int code;       /* exit code (-1: did not exit normally) */
  char *out;      /* stdout (malloc'd) */
  char *err;      /* stderr (malloc'd) */
} cli_run;

static void cli_run_free(cli_run *r) {
  free(r->out);
  free(r->err);
}

/* Runs build/bin/shardplan with `args` (NULL-terminated) and `env_token` as
 * SHARDPLAN_TOKEN_FILE (NULL: unset). */
static cli_run run_cli_env(const char *env_token, const char *const *args) {
  char outp[128], errp[128];
  snprintf(outp, sizeof outp, "/tmp/sp-cli-out.%d", (int)getpid());
  snprintf(errp, sizeof errp, "/tmp/sp-cli-err.%d", (int)getpid());
  const char *argv[40];
  int n = 0;
  argv[n++] = SP_BIN_DIR "/shardplan";
  for (int i = 0; args[i] && n < 39; i++) argv[n++] = args[i];
  argv[n] = NULL;
  pid_t pid = fork();
  ck_assert(pid >= 0);
  if (pid == 0) {
    int o = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int e = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (o < 0 || e < 0) _exit(120);
    dup2(o, 1);
    dup2(e, 2);
    unsetenv("SHARDPLAN_SERVER");
    if (env_token) setenv("SHARDPLAN_TOKEN_FILE", env_token, 1);
    else unsetenv("SHARDPLAN_TOKEN_FILE");
    execv(argv[0], (char *const *)argv);
    _exit(121);
  }
  int status;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  cli_run r;
  size_t len;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = sp_test_read_file(outp, &len);
  r.err = sp_test_read_file(errp, &len);
  unlink(outp);
  unlink(errp);
  ck_assert(r.out && r.err);
  return r;
}

#define RUN(...) run_cli_env(NULL, (const char *const[]){__VA_ARGS__, NULL})

/* The value after "key:" in plan/get output ("" when absent). */
static void key_from(const char *out, char key[65]) {
  const char *k = strstr(out, "key:");
  key[0] = '\0';
  if (!k) return;
  k += 4;
  while (*k == ' ') k++;
  snprintf(key, 65, "%.64s", k);
}

static void start_daemon(th_daemon *d, const char *const *extra) {
  ck_assert_msg(th_daemon_start(d, NULL, extra), "shardpland did not start");
}

#define MLP SP_SOURCE_DIR "/examples/mlp.mlir"

START_TEST(test_cli_plan_misses_then_hits_and_manages_the_cache) {
  th_daemon d;
  start_daemon(&d, NULL);
  cli_run h = RUN("--server", d.addr, "health");
  ck_assert_msg(h.code == 0, "health: %d %s", h.code, h.err);
  ck_assert_str_eq(h.out, "SERVING\n");
  cli_run_free(&h);

  /* Propagation only: a miss, then the same key as a hit. */
  cli_run a = RUN("--server", d.addr, "plan", MLP);
  ck_assert_msg(a.code == 0, "plan: %d %s", a.code, a.err);
  char k1[65], k2[65], ks[65];
  key_from(a.out, k1);
  ck_assert_int_eq(strlen(k1), 64);
  ck_assert_ptr_nonnull(strstr(a.out, "\ncache: miss\n"));
  ck_assert_ptr_nonnull(strstr(a.out, "status:      propagated"));
  ck_assert_ptr_nonnull(strstr(a.out, "shardings:\n"));
  cli_run b = RUN("plan", MLP, "--server", d.addr);   /* options after the command too */
  ck_assert_int_eq(b.code, 0);
  key_from(b.out, k2);
  ck_assert_str_eq(k1, k2);
  ck_assert_ptr_nonnull(strstr(b.out, "\ncache: hit\n"));
  cli_run_free(&a);
  cli_run_free(&b);
  /* The module from standard input: the same key. */
  char cmd[1024], outp[128];
  snprintf(outp, sizeof outp, "/tmp/sp-cli-stdin-%d", (int)getpid());
  snprintf(cmd, sizeof cmd, "%s/shardplan --server %s plan - < %s > %s", SP_BIN_DIR, d.addr, MLP,
           outp);
  ck_assert_int_eq(system(cmd), 0);
  size_t olen;
  char *o = sp_test_read_file(outp, &olen);
  ck_assert_ptr_nonnull(o);
  key_from(o, k2);
  ck_assert_str_eq(k1, k2);
  free(o);
  unlink(outp);

  /* --search without a cluster: the bundled one-machine 8-GPU example; another key. */
  cli_run s = RUN("--server", d.addr, "plan", MLP, "--search", "--time-limit", "20");
  ck_assert_msg(s.code == 0, "plan --search: %d %s", s.code, s.err);
  key_from(s.out, ks);
  ck_assert_str_ne(ks, k1);
  ck_assert_ptr_nonnull(strstr(s.out, "cache: miss"));
  ck_assert_ptr_nonnull(strstr(s.out, "cost:"));
  ck_assert_ptr_nonnull(strstr(s.out, "mesh:"));
  cli_run_free(&s);
  /* The same search named by its example and given as the cluster file: the same plan. */
  cli_run s2 = RUN("--server", d.addr, "plan", MLP, "--cluster", "one_machine_8gpu");
  cli_run s3 = RUN("--server", d.addr, "plan", MLP, "--cluster",
                   SP_SOURCE_DIR "/examples/clusters/one_machine_8gpu.json");
  ck_assert_int_eq(s2.code, 0);
  ck_assert_int_eq(s3.code, 0);
  key_from(s2.out, k2);
  ck_assert_str_eq(k2, ks);
  ck_assert_ptr_nonnull(strstr(s2.out, "cache: hit"));
  key_from(s3.out, k2);
  ck_assert_str_eq(k2, ks);
  cli_run_free(&s2);
  cli_run_free(&s3);

  cli_run g = RUN("--server", d.addr, "get", ks);
  ck_assert_int_eq(g.code, 0);
  key_from(g.out, k2);
  ck_assert_str_eq(k2, ks);
  cli_run_free(&g);
  static const struct { const char *fmt, *expect; } fmts[] = {
      {"sdy", "sdy.mesh"}, {"json", "{"}, {"jax", "main_in_shardings = ("},
      {"gspmd", "@main arg 0"}};
  for (size_t i = 0; i < sizeof fmts / sizeof fmts[0]; i++) {
    cli_run e = RUN("--server", d.addr, "export", ks, "--format", fmts[i].fmt);
    ck_assert_msg(e.code == 0 && strstr(e.out, fmts[i].expect), "export %s: %d %s %.200s",
                  fmts[i].fmt, e.code, e.err, e.out);
    cli_run_free(&e);
  }
  cli_run ebad = RUN("--server", d.addr, "export", ks, "--format", "xml");
  ck_assert_int_eq(ebad.code, 2);
  cli_run_free(&ebad);

  cli_run l = RUN("--server", d.addr, "list", "--page-size", "1");   /* two pages */
  ck_assert_int_eq(l.code, 0);
  ck_assert_ptr_nonnull(strstr(l.out, k1));
  ck_assert_ptr_nonnull(strstr(l.out, ks));
  cli_run_free(&l);
  cli_run st = RUN("--server", d.addr, "stats");
  ck_assert_int_eq(st.code, 0);
  ck_assert_msg(strstr(st.out, "plans:              2\n"), "%s", st.out);
  ck_assert_ptr_nonnull(strstr(st.out, "hits:"));
  cli_run_free(&st);

  cli_run del = RUN("--server", d.addr, "delete", k1);
  ck_assert_int_eq(del.code, 0);
  ck_assert_ptr_nonnull(strstr(del.out, "deleted"));
  cli_run_free(&del);
  cli_run gone = RUN("--server", d.addr, "get", k1);
  ck_assert_int_eq(gone.code, 4);
  ck_assert(gone.err[0]);
  cli_run_free(&gone);
  cli_run del2 = RUN("--server", d.addr, "delete", k1);
  ck_assert_int_eq(del2.code, 4);
  cli_run_free(&del2);

  cli_run p1 = RUN("--server", d.addr, "purge", "--older-than-version");
  ck_assert_int_eq(p1.code, 0);
  ck_assert_str_eq(p1.out, "purged 0 plans\n");
  cli_run_free(&p1);
  cli_run p2 = RUN("--server", d.addr, "purge", "--all");
  ck_assert_int_eq(p2.code, 0);
  ck_assert_str_eq(p2.out, "purged 1 plan\n");
  cli_run_free(&p2);
  cli_run p3 = RUN("--server", d.addr, "purge");
  ck_assert_int_eq(p3.code, 2);
  cli_run_free(&p3);
  ck_assert_int_eq(th_daemon_stop(&d), 0);
}
END_TEST

START_TEST(test_cli_exit_code_for_each_kind_of_failure) {
  th_daemon d;
  start_daemon(&d, NULL);
  char bad[128];
  snprintf(bad, sizeof bad, "/tmp/sp-cli-bad-%d.mlir", (int)getpid());
  FILE *f = fopen(bad, "w");
  fputs("module {\n  func.func @main(%a: tensor<8xf32>) -> tensor<8xf32> {\n"
        "    %b = stablehlo.add %a, %a : tensor<8xf32\n  }\n}\n", f);
  fclose(f);
  /* Bad input: the daemon refuses the module, naming the file and the place. */
  cli_run r = RUN("--server", d.addr, "plan", bad);
  ck_assert_int_eq(r.code, 3);
  ck_assert_msg(strstr(r.err, bad) && strstr(r.err, ":3:"), "%s", r.err);
  cli_run_free(&r);
  unlink(bad);
  r = RUN("--server", d.addr, "plan", "/nonexistent/model.mlir");
  ck_assert_int_eq(r.code, 3);
  ck_assert_ptr_nonnull(strstr(r.err, "/nonexistent/model.mlir"));
  cli_run_free(&r);
  r = RUN("--server", d.addr, "plan", MLP, "--cluster", "no_such_cluster");
  ck_assert_int_eq(r.code, 3);
  ck_assert_msg(strstr(r.err, "no_such_cluster"), "%s", r.err);
  cli_run_free(&r);
  r = RUN("--server", d.addr, "plan", MLP, "--mesh", "data=4");   /* the MLP has a mesh */
  ck_assert_int_eq(r.code, 3);
  cli_run_free(&r);
  /* Not found. */
  r = RUN("--server", d.addr, "get", "00000000000000000000000000000000"
                                      "00000000000000000000000000000000");
  ck_assert_int_eq(r.code, 4);
  cli_run_free(&r);
  /* Usage. */
  const char *const usage[][4] = {{"frobnicate", NULL}, {"get", NULL}, {"--timeout", "-1",
                                  "stats", NULL}, {"--bogus", "stats", NULL}};
  for (size_t i = 0; i < 4; i++) {
    const char *args[6] = {"--server", d.addr};
    for (int j = 0; j < 4 && usage[i][j]; j++) args[2 + j] = usage[i][j];
    r = run_cli_env(NULL, args);
    ck_assert_msg(r.code == 2, "usage case %zu: %d", i, r.code);
    cli_run_free(&r);
  }
  /* Deadline: a search given 1 ms. */
  r = RUN("--server", d.addr, "--timeout", "0.001", "plan", MLP, "--search", "--gap", "0.5");
  ck_assert_msg(r.code == 5, "%d %s", r.code, r.err);
  cli_run_free(&r);
  /* Unimplemented (through the library: the command only calls known methods). */
  sp_client_options o = {.target = d.addr};
  sp_client *c;
  sp_client_error e;
  ck_assert_int_eq(sp_client_open(&o, &c, &e), SP_CLIENT_OK);
  uint8_t *resp = NULL;
  size_t rlen = 0;
  int rc = sp_client_call_raw(c, "/shardplan.v1.Planner/NoSuchMethod", "", 0, 5000, &resp,
                              &rlen, &e);
  ck_assert_int_eq(rc, SP_CLIENT_UNIMPLEMENTED);
  ck_assert_int_eq(sp_client_exit_code(rc), 9);
  free(resp);
  sp_client_close(c);
  ck_assert_int_eq(th_daemon_stop(&d), 0);
  /* Unreachable: the daemon is gone. */
  r = RUN("--server", d.addr, "stats");
  ck_assert_int_eq(r.code, 7);
  ck_assert_msg(strstr(r.err, "cannot reach shardpland"), "%s", r.err);
  cli_run_free(&r);
}
END_TEST

START_TEST(test_cli_token_required_except_for_health) {
  char tok[128], wrong[128];
  snprintf(tok, sizeof tok, "/tmp/sp-cli-token-%d", (int)getpid());
  snprintf(wrong, sizeof wrong, "/tmp/sp-cli-wrong-%d", (int)getpid());
  FILE *f = fopen(tok, "w");
  fputs("s3cret-token\n", f);
  fclose(f);
  f = fopen(wrong, "w");
  fputs("not-the-token\n", f);
  fclose(f);
  th_daemon d;
  const char *const extra[] = {"--token-file", tok, NULL};
  start_daemon(&d, extra);
  cli_run r = RUN("--server", d.addr, "stats");
  ck_assert_int_eq(r.code, 8);
  cli_run_free(&r);
  r = RUN("--server", d.addr, "--token-file", wrong, "stats");
  ck_assert_int_eq(r.code, 8);
  cli_run_free(&r);
  r = RUN("--server", d.addr, "--token-file", tok, "plan", MLP);
  ck_assert_msg(r.code == 0, "%d %s", r.code, r.err);
  cli_run_free(&r);
  r = run_cli_env(tok, (const char *const[]){"--server", d.addr, "stats", NULL});
  ck_assert_int_eq(r.code, 0);
  cli_run_free(&r);
  r = RUN("--server", d.addr, "health");
  ck_assert_int_eq(r.code, 0);
  cli_run_free(&r);
  r = RUN("--server", d.addr, "--token-file", "/nonexistent/token", "stats");
  ck_assert_int_eq(r.code, 3);
  cli_run_free(&r);
  ck_assert_int_eq(th_daemon_stop(&d), 0);
  unlink(tok);
  unlink(wrong);
}
END_TEST

/* A GPT of `layers` layers from shardplan-gen, written to `path`. */
static void gen_gpt(int layers, const char *path) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "%s/shardplan-gen --model gpt --layers %d --backward -o %s",
           SP_BIN_DIR, layers, path);
  ck_assert_int_eq(system(cmd), 0);
}

typedef struct long_plan {
  sp_client *c;
  Shardplan__V1__PlanRequest *req;
  int rc;
  int progress_events;
  Shardplan__V1__PlanResponse *resp;
} long_plan;

static void count_progress(const Shardplan__V1__Progress *p, void *user) {
  long_plan *lp = user;
  lp->progress_events++;
  ck_assert(p->stage && p->stage[0]);
}

static void *long_plan_main(void *arg) {
  long_plan *lp = arg;
  sp_client_error e;
  lp->rc = sp_client_plan_stream(lp->c, lp->req, 60000, count_progress, lp, &lp->resp, &e);
  return NULL;
}

START_TEST(test_cli_busy_daemon_is_unavailable_with_retry_hint) {
  th_daemon d;
  const char *const extra[] = {"--max-searches", "1", "--max-queue", "0", NULL};
  start_daemon(&d, extra);
  char big[128], small[128];
  snprintf(big, sizeof big, "/tmp/sp-cli-gpt24-%d.mlir", (int)getpid());
  snprintf(small, sizeof small, "/tmp/sp-cli-gpt2-%d.mlir", (int)getpid());
  gen_gpt(24, big);
  gen_gpt(2, small);
  size_t len;
  char *text = sp_test_read_file(big, &len);
  Shardplan__V1__PlanRequest req = SHARDPLAN__V1__PLAN_REQUEST__INIT;
  Shardplan__V1__PlanOptions po = SHARDPLAN__V1__PLAN_OPTIONS__INIT;
  req.graph_case = SHARDPLAN__V1__PLAN_REQUEST__GRAPH_MLIR;
  req.mlir = text;
  req.options = &po;
  po.mode = SHARDPLAN__V1__PLAN_MODE__PLAN_MODE_SEARCH;
  po.time_limit_seconds = 8;
  po.mesh_shape = SHARDPLAN__V1__MESH_SHAPE_SEARCH__MESH_SHAPE_AUTO;
  po.no_share_layers = true;
  sp_client_options o = {.target = d.addr};
  long_plan lp = {.req = &req};
  sp_client_error e;
  ck_assert_int_eq(sp_client_open(&o, &lp.c, &e), SP_CLIENT_OK);
  pthread_t th;
  pthread_create(&th, NULL, long_plan_main, &lp);
  /* Wait until the long search holds the only slot. */
  int64_t inflight = 0;
  for (int i = 0; i < 300 && inflight == 0; i++) {
    usleep(20000);
    Shardplan__V1__Stats *st = NULL;
    if (sp_client_get_stats(lp.c, 5000, &st, &e) == SP_CLIENT_OK) inflight = st->searches_in_flight;
    sp_client_free(st);
  }
  ck_assert_int_eq(inflight, 1);
  cli_run r = RUN("--server", d.addr, "plan", small, "--search", "--time-limit", "5");
  ck_assert_msg(r.code == 6, "%d %s", r.code, r.err);
  ck_assert_msg(strstr(r.err, "retry in"), "%s", r.err);
  cli_run_free(&r);
  pthread_join(th, NULL);
  ck_assert_int_eq(lp.rc, SP_CLIENT_OK);
  ck_assert(lp.progress_events > 0);   /* PlanStream delivered progress, then the plan */
  ck_assert_int_eq(strlen(lp.resp->key), 64);
  sp_client_free(lp.resp);
  sp_client_close(lp.c);
  free(text);
  unlink(big);
  unlink(small);
  ck_assert_int_eq(th_daemon_stop(&d), 0);
}
END_TEST

START_TEST(test_cli_draws_progress_on_a_terminal_only) {
  if (system("command -v script >/dev/null 2>&1") != 0) {
    printf("test_client: no `script` command (util-linux) to give the CLI a terminal\n");
    return;
  }
  th_daemon d;
  start_daemon(&d, NULL);
  char out[128], cmd[1024];
  snprintf(out, sizeof out, "/tmp/sp-cli-tty-%d", (int)getpid());
  snprintf(cmd, sizeof cmd, "script -qec '%s/shardplan --server %s plan %s --search' /dev/null "
           "> %s 2>&1", SP_BIN_DIR, d.addr, MLP, out);
  ck_assert_int_eq(system(cmd), 0);
  size_t len;
  char *tty = sp_test_read_file(out, &len);
  ck_assert_ptr_nonnull(tty);
  /* A bar redrawn in place (carriage return, erase to end of line), then the summary. */
  ck_assert_msg(strstr(tty, "\r[") && strstr(tty, "\033[K"), "%s", tty);
  ck_assert_ptr_nonnull(strstr(tty, "cache: miss"));
  free(tty);
  unlink(out);
  /* Not a terminal: no bar at all. */
  cli_run r = RUN("--server", d.addr, "plan", MLP, "--search", "--cluster", "four_machines_32gpu");
  ck_assert_int_eq(r.code, 0);
  ck_assert_ptr_null(strchr(r.err, '\r'));
  ck_assert_ptr_null(strchr(r.out, '\r'));
  cli_run_free(&r);
  ck_assert_int_eq(th_daemon_stop(&d), 0);
}
END_TEST

typedef struct hit_worker {
  sp_client *c;
  const char *mlir;
  char key[65];
  int ok;
  char why[SP_CLIENT_MSG_MAX];
} hit_worker;

static void *hit_main(void *arg) {
  hit_worker *w = arg;
  Shardplan__V1__PlanRequest req = SHARDPLAN__V1__PLAN_REQUEST__INIT;
  req.graph_case = SHARDPLAN__V1__PLAN_REQUEST__GRAPH_MLIR;
  req.mlir = (char *)w->mlir;
  for (int i = 0; i < 25; i++) {
    Shardplan__V1__PlanResponse *r = NULL;
    sp_client_error e;
    if (sp_client_plan(w->c, &req, 60000, &r, &e) == SP_CLIENT_OK) {
      if (!w->key[0]) snprintf(w->key, sizeof w->key, "%s", r->key);
      if (strcmp(w->key, r->key) == 0) w->ok++;
    } else {
      snprintf(w->why, sizeof w->why, "%s", e.message);
    }
    sp_client_free(r);
  }
  return NULL;
}

START_TEST(test_library_client_is_shared_by_threads) {
  th_daemon d;
  start_daemon(&d, NULL);
  size_t len;
  char *mlp = sp_test_read_file(MLP, &len);
  sp_client_options o = {.target = d.addr};
  sp_client *c;
  sp_client_error e;
  ck_assert_int_eq(sp_client_open(&o, &c, &e), SP_CLIENT_OK);
  hit_worker w[8];
  pthread_t th[8];
  for (int i = 0; i < 8; i++) {
    w[i] = (hit_worker){.c = c, .mlir = mlp};
    pthread_create(&th[i], NULL, hit_main, &w[i]);
  }
  for (int i = 0; i < 8; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < 8; i++) {
    ck_assert_msg(w[i].ok == 25, "thread %d: %d of 25 (%s)", i, w[i].ok, w[i].why);
    ck_assert_str_eq(w[i].key, w[0].key);
  }
  Shardplan__V1__Stats *st = NULL;
  ck_assert_int_eq(sp_client_get_stats(c, 5000, &st, &e), SP_CLIENT_OK);
  ck_assert_int_eq(st->plans, 1);
  ck_assert_int_ge(st->hits, 8 * 25 - 8);   /* at most one miss per thread */
  sp_client_free(st);
  sp_client_close(c);
  free(mlp);
  ck_assert_int_eq(th_daemon_stop(&d), 0);
}
END_TEST

START_TEST(test_plan_summary_prints_key_cache_status_and_costs) {
  char b[32];
  ck_assert_str_eq(sp_cli_seconds(40e-9, b, sizeof b), "40 ns");
  ck_assert_str_eq(sp_cli_seconds(850e-6, b, sizeof b), "850 us");
  ck_assert_str_eq(sp_cli_seconds(0.0123, b, sizeof b), "12.3 ms");
  ck_assert_str_eq(sp_cli_bytes(512, b, sizeof b), "512 B");
  ck_assert_str_eq(sp_cli_bytes(1.5 * 1024 * 1024 * 1024, b, sizeof b), "1.50 GiB");
  Shardplan__V1__Costs costs = SHARDPLAN__V1__COSTS__INIT;
  costs.total_seconds = 0.0184;
  costs.compute_seconds = 0.0172;
  costs.communication_seconds = 0.0012;
  costs.peak_memory_bytes = 1024 * 1024;
  Shardplan__V1__Collective col = SHARDPLAN__V1__COLLECTIVE__INIT;
  Shardplan__V1__Collective *cols[2] = {&col, &col};
  col.kind = "all-reduce";
  col.bytes = 1024;
  Shardplan__V1__Plan plan = SHARDPLAN__V1__PLAN__INIT;
  plan.costs = &costs;
  plan.n_collectives = 2;
  plan.collectives = cols;
  plan.planner_version = "0.1.0+abc";
  Shardplan__V1__PlanResponse r = SHARDPLAN__V1__PLAN_RESPONSE__INIT;
  r.key = "ab12";
  r.cache_hit = true;
  r.status = SHARDPLAN__V1__PLAN_STATUS__PLAN_STATUS_CUT_SHORT;
  r.provisional = true;
  r.gap = 0.021;
  r.plan = &plan;
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  sp_cli_print_plan(f, &r, 10);
  fclose(f);
  ck_assert_msg(strstr(buf, "key:         ab12\ncache: hit\n"), "%s", buf);
  ck_assert_ptr_nonnull(strstr(buf, "status:      cut short (provisional), gap 2.10%\n"));
  ck_assert_ptr_nonnull(strstr(buf, "cost:        18.4 ms per step (compute 17.2 ms, "
                                    "communication 1.2 ms)\n"));
  ck_assert_ptr_nonnull(strstr(buf, "collectives: 2 (all-reduce 2), 2.00 KiB per device"));
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
  tcase_add_test(tc, test_plan_summary_prints_key_cache_status_and_costs);
  suite_add_tcase(s, tc);
  TCase *td = tcase_create("daemon");
  tcase_set_timeout(td, 300);
  tcase_add_test(td, test_cli_plan_misses_then_hits_and_manages_the_cache);
  tcase_add_test(td, test_cli_exit_code_for_each_kind_of_failure);
  tcase_add_test(td, test_cli_token_required_except_for_health);
  tcase_add_test(td, test_cli_busy_daemon_is_unavailable_with_retry_hint);
  tcase_add_test(td, test_library_client_is_shared_by_threads);
  tcase_add_test(td, test_cli_draws_progress_on_a_terminal_only);
  suite_add_tcase(s, td);
  return s;
}

int main(void) { return sp_test_run(client_suite()); }
