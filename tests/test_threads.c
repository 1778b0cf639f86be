/*
 * test_threads.c - the engine is safe to call from many threads at once: the examples and
 * generated MLP and GPT models (server/gen) are planned (propagation, and propagation + the
 * cost search) on 8 threads at the same time, each job twice, and every plan's JSON must
 * equal, byte for byte, the plan the same job gave when run alone first. One job has a
 * binding memory limit, so GLPK's integer program runs on several threads at once. Built with
 * -DSP_TSAN=ON it runs under ThreadSanitizer, which fails it on any data race.
 */
#include <check.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen/model_gen.h"
#include "ir/strbuf.h"
#include "plan/plan.h"
#include "cluster_support.h"
#include "test_support.h"

#define NTHREADS 8
#define MAX_JOBS 16

typedef struct job {
  char *text;              /* MLIR */
  bool search;
  const sp_cluster *cluster;
  const char *search_options;
  char *expected;          /* plan JSON from the sequential run */
} job;

static job jobs[MAX_JOBS];
static int njobs;

/* The plan of job `j` as JSON, with the wall-clock seconds (the only part that may differ
 * between runs) zeroed. NULL with a message in `why` on failure. */
static char *plan_json(const job *j, char *why, size_t whylen) {
  sp_plan_options o;
  sp_plan_options_init(&o);
  o.mode = j->search ? SP_PLAN_PROPAGATE_SEARCH : SP_PLAN_PROPAGATE;
  /* No wall-clock limit: the search is then bounded by work only, and deterministic. */
  o.search_options = j->search_options ? j->search_options : "time-limit=0";
  sp_plan_input in = {.text = j->text, .len = strlen(j->text), .filename = "job.mlir"};
  sp_plan *p = NULL;
  sp_err err;
  if (sp_plan_run(&in, j->search ? j->cluster : NULL, &o, &p, &err) != SP_OK) {
    snprintf(why, whylen, "%s", err.msg);
    return NULL;
  }
  p->solver.build_s = p->solver.solve_s = 0;
  char *s = sp_plan_to_json_text(p, false);
  sp_plan_free(p);
  if (!s) snprintf(why, whylen, "out of memory");
  return s;
}

static char *generate(sp_gen_model model, int layers, sp_gen_annotate annotate, bool backward) {
  sp_gen_options o;
  sp_gen_default_options(&o);
  o.model = model;
  o.layers = layers;
  o.hidden = 256;
  o.heads = 4;
  o.seq = 64;
  o.batch = 8;
  o.annotate = annotate;
  o.backward = backward;
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_err err;
  ck_assert_msg(sp_gen_write(&o, &sb, NULL, &err) == SP_OK, "%s", err.msg);
  return sp_strbuf_detach(&sb);
}

static void add_job(char *text, bool search, const sp_cluster *c, const char *search_options) {
  ck_assert_int_lt(njobs, MAX_JOBS);
  jobs[njobs++] = (job){text, search, c, search_options, NULL};
}

/* The first difference, on stderr, to see what changed. */
static void report_difference(const job *j, const char *got, const char *why) {
  if (!got) {
    fprintf(stderr, "job %d failed: %s\n", (int)(j - jobs), why);
    return;
  }
  size_t k = 0;
  while (got[k] && got[k] == j->expected[k]) k++;
  size_t from = k > 80 ? k - 80 : 0;
  fprintf(stderr, "job %d differs at byte %zu:\n  expected ...%.160s\n  got      ...%.160s\n",
          (int)(j - jobs), k, j->expected + from, got + from);
}

static void *worker(void *arg) {
  intptr_t t = (intptr_t)arg;
  char why[SP_ERR_MSG_MAX + 64];
  intptr_t bad = 0;
  /* Each thread runs every job twice, starting at a different one. */
  for (int k = 0; k < 2 * njobs; k++) {
    const job *j = &jobs[(t + k) % njobs];
    char *s = plan_json(j, why, sizeof why);
    if (!s || strcmp(s, j->expected) != 0) {
      if (!bad) report_difference(j, s, why);
      bad++;
    }
    free(s);
  }
  return (void *)bad;
}

START_TEST(test_eight_threads_plan_what_one_thread_plans) {
  sp_cluster *c = sp_test_load_cluster("one_machine_8gpu.json");
  size_t len;
  char path[1024];
  snprintf(path, sizeof path, "%s/examples/mlp.mlir", SP_SOURCE_DIR);
  char *mlp = sp_test_read_file(path, &len);
  ck_assert_ptr_nonnull(mlp);
  snprintf(path, sizeof path, "%s/examples/conflict.mlir", SP_SOURCE_DIR);
  char *conflict = sp_test_read_file(path, &len);
  ck_assert_ptr_nonnull(conflict);
  add_job(mlp, false, c, NULL);
  add_job(strdup(mlp), true, c, NULL);
  add_job(conflict, false, c, NULL);
  add_job(generate(SP_GEN_MLP, 2, SP_GEN_ANNOTATE_DATA, false), true, c, NULL);
  add_job(generate(SP_GEN_MLP, 3, SP_GEN_ANNOTATE_MEGATRON, false), false, c, NULL);
  add_job(generate(SP_GEN_GPT, 1, SP_GEN_ANNOTATE_MEGATRON, false), true, c, NULL);
  add_job(generate(SP_GEN_GPT, 2, SP_GEN_ANNOTATE_DATA, true), false, c, NULL);
  add_job(generate(SP_GEN_GPT, 1, SP_GEN_ANNOTATE_NONE, false), true, c, NULL);
  /* A memory limit that binds: the solver runs GLPK's integer program (2,040 columns). */
  add_job(generate(SP_GEN_MLP, 4, SP_GEN_ANNOTATE_NONE, true), true, c, "time-limit=0 memory-limit=1000000");
  char why[SP_ERR_MSG_MAX + 64];
  for (int i = 0; i < njobs; i++) {
    jobs[i].expected = plan_json(&jobs[i], why, sizeof why);
    ck_assert_msg(jobs[i].expected != NULL, "job %d: %s", i, why);
  }
  ck_assert_msg(strstr(jobs[njobs - 1].expected, "\"ilp_cols\":0,") == NULL,
                "the memory-limited job should run the ILP");
  pthread_t th[NTHREADS];
  for (intptr_t t = 0; t < NTHREADS; t++)
    ck_assert_int_eq(pthread_create(&th[t], NULL, worker, (void *)t), 0);
  intptr_t bad = 0;
  for (int t = 0; t < NTHREADS; t++) {
    void *r;
    ck_assert_int_eq(pthread_join(th[t], &r), 0);
    bad += (intptr_t)r;
  }
  ck_assert_msg(bad == 0, "%ld plans differ from the sequential ones", (long)bad);
  for (int i = 0; i < njobs; i++) {
    free(jobs[i].text);
    free(jobs[i].expected);
  }
  sp_cluster_free(c);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("threads");
  TCase *tc = tcase_create("threads");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_eight_threads_plan_what_one_thread_plans);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return sp_test_run(suite()); }
