/*
 * bench_daemon.c - the daemon over loopback: cache-hit Plan latency (p50, p99) and requests per
 * second from 1 and from 16 concurrent clients, for the MLP example and a generated ~1,000-op
 * GPT, next to a bare Health/Check on the same server in the same run; and cold plans (the
 * first Plan of a request: parse, propagate, search, store) of the example and of generated
 * GPTs up to 96 layers over 64 devices.
 *
 *   build/bin/bench_daemon [SECONDS_PER_MEASURE]      (default 3)
 *
 * It starts build/bin/shardpland on 127.0.0.1:0 in a temporary folder (the harness of the
 * daemon tests), one gRPC channel per client thread, unary calls with a 60 s deadline. Output
 * is Markdown for bench/RESULTS.md. Client and server share the machine's cores.
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ir/clock.h"
#include "ir/err.h"
#include "ir/file_read.h"
#include "ir/grow.h"
#include "shardplan/v1/planner.pb-c.h"
#include "support/daemon_harness.h"

static char *gen(const char *args) {
  char path[128], cmd[512];
  snprintf(path, sizeof path, "/tmp/bench-daemon-%d.mlir", (int)getpid());
  snprintf(cmd, sizeof cmd, "%s/shardplan-gen %s -o %s", SP_BIN_DIR, args, path);
  if (system(cmd)) return NULL;
  char *t = NULL;
  sp_file_read(path, SIZE_MAX, &t, NULL);
  unlink(path);
  return t;
}

static uint8_t *request(const char *mlir, const char *cluster, double time_limit, size_t *len) {
  Shardplan__V1__PlanRequest r = SHARDPLAN__V1__PLAN_REQUEST__INIT;
  Shardplan__V1__PlanOptions o = SHARDPLAN__V1__PLAN_OPTIONS__INIT;
  Shardplan__V1__Cluster c = SHARDPLAN__V1__CLUSTER__INIT;
  r.graph_case = SHARDPLAN__V1__PLAN_REQUEST__GRAPH_MLIR;
  r.mlir = (char *)mlir;
  o.mode = SHARDPLAN__V1__PLAN_MODE__PLAN_MODE_SEARCH;
  o.time_limit_seconds = time_limit;
  r.options = &o;
  c.source_case = SHARDPLAN__V1__CLUSTER__SOURCE_EXAMPLE;
  c.example = (char *)cluster;
  r.cluster = &c;
  *len = shardplan__v1__plan_request__get_packed_size(&r);
  uint8_t *b = malloc(*len);
  shardplan__v1__plan_request__pack(&r, b);
  return b;
}

/* ------------------------------------------------------------------ load */

typedef struct load {
  const char *addr, *method;
  const uint8_t *req;
  size_t len;
  double until;
  double *lat;        /* ms */
  size_t n, cap;
  int errors;
} load;

static void *client(void *arg) {
  load *l = arg;
  th_channel *c = th_connect(l->addr, NULL);
  /* One call to set the connection up, not measured. */
  th_result w = th_call(c, l->method, l->req, l->len, 60000, NULL);
  th_result_free(&w);
  while (sp_clock_now() < l->until) {
    th_result r = th_call(c, l->method, l->req, l->len, 60000, NULL);
    if (r.status != 0) l->errors++;
    if (sp_grow_z((void **)&l->lat, &l->cap, l->n, sizeof *l->lat) == SP_OK) l->lat[l->n++] = r.ms;
    th_result_free(&r);
  }
  th_close(c);
  return NULL;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

typedef struct figures {
  double p50, p99, rps;
  size_t n;
  int errors;
} figures;

static figures measure(const char *addr, const char *method, const uint8_t *req, size_t len,
                       int clients, double seconds) {
  load ls[16];
  pthread_t th[16];
  double start = sp_clock_now();
  for (int i = 0; i < clients; i++) {
    ls[i] = (load){addr, method, req, len, start + seconds, NULL, 0, 0, 0};
    pthread_create(&th[i], NULL, client, &ls[i]);
  }
  size_t total = 0;
  for (int i = 0; i < clients; i++) {
    pthread_join(th[i], NULL);
    total += ls[i].n;
  }
  double elapsed = sp_clock_now() - start;
  double *all = malloc((total ? total : 1) * sizeof *all);
  size_t k = 0;
  figures f = {0};
  for (int i = 0; i < clients; i++) {
    memcpy(all + k, ls[i].lat, ls[i].n * sizeof *all);
    k += ls[i].n;
    f.errors += ls[i].errors;
    free(ls[i].lat);
  }
  qsort(all, total, sizeof *all, cmp);
  f.n = total;
  if (total) {
    f.p50 = all[total / 2];
    f.p99 = all[(size_t)((double)total * 0.99) < total ? (size_t)((double)total * 0.99)
                                                       : total - 1];
  }
  f.rps = (double)total / elapsed;
  free(all);
  return f;
}

static double cold_plan(const char *addr, const char *mlir, const char *cluster, double tl,
                        char *status, size_t cap) {
  size_t len;
  uint8_t *req = request(mlir, cluster, tl, &len);
  th_channel *c = th_connect(addr, NULL);
  th_result r = th_call(c, "/shardplan.v1.Planner/Plan", req, len, 600000, NULL);
  snprintf(status, cap, "error %d", r.status);
  if (r.status == 0) {
    Shardplan__V1__PlanResponse *p = shardplan__v1__plan_response__unpack(NULL, r.len, r.msg);
    if (p) {
      snprintf(status, cap, "%s%s, %.3f ms/step, search %.2f s",
               p->plan && p->plan->solver ? p->plan->solver->status : "propagated",
               p->cache_hit ? " (hit)" : "",
               p->plan && p->plan->costs ? p->plan->costs->total_seconds * 1e3 : 0,
               p->search_seconds);
      shardplan__v1__plan_response__free_unpacked(p, NULL);
    }
  }
  double ms = r.ms;
  th_result_free(&r);
  th_close(c);
  free(req);
  return ms;
}

int main(int argc, char **argv) {
  double secs = argc > 1 ? atof(argv[1]) : 3;
  th_daemon d;
  if (!th_daemon_start(&d, NULL, NULL)) return 1;
  char *mlp = NULL;
  sp_file_read(SP_SOURCE_DIR "/examples/mlp.mlir", SIZE_MAX, &mlp, NULL);
  char *gpt = gen("--model gpt --ops 1000 --backward");
  if (!mlp || !gpt) return 1;
  size_t mlen, glen;
  uint8_t *mreq = request(mlp, "one_machine_8gpu", 10, &mlen);
  uint8_t *greq = request(gpt, "one_machine_8gpu", 10, &glen);

  printf("Cold plans (first request: parse, verify, propagate, search, store; one client):\n\n");
  printf("| model | cluster | wall ms | answer |\n|---|---|---|---|\n");
  char st[256];
  double ms = cold_plan(d.addr, mlp, "one_machine_8gpu", 10, st, sizeof st);
  printf("| MLP example | one_machine_8gpu | %.0f | %s |\n", ms, st);
  ms = cold_plan(d.addr, gpt, "one_machine_8gpu", 10, st, sizeof st);
  printf("| GPT ~1,000 ops (fwd+bwd) | one_machine_8gpu | %.0f | %s |\n", ms, st);
  const struct {
    const char *args, *name;
  } big[] = {{"--model gpt --layers 96 --mesh data=8,model=8 --annotate none",
              "GPT 96 layers (fwd)"}};
  for (size_t i = 0; i < sizeof big / sizeof big[0]; i++) {
    char *t = gen(big[i].args);
    if (!t) continue;
    ms = cold_plan(d.addr, t, "eight_machines_64gpu", 60, st, sizeof st);
    printf("| %s | eight_machines_64gpu | %.0f | %s |\n", big[i].name, ms, st);
    free(t);
  }

  printf("\nCache hits and Health over loopback, %.0f s per row, same server, same run:\n\n",
         secs);
  printf("| call | clients | requests | p50 ms | p99 ms | requests/s | errors |\n"
         "|---|---|---|---|---|---|---|\n");
  const struct {
    const char *name, *method;
    const uint8_t *req;
    size_t len;
  } rows[] = {
      {"Health/Check", "/grpc.health.v1.Health/Check", (const uint8_t *)"", 0},
      {"Plan hit, MLP example", "/shardplan.v1.Planner/Plan", mreq, mlen},
      {"Plan hit, GPT ~1,000 ops", "/shardplan.v1.Planner/Plan", greq, glen},
  };
  for (int clients = 1; clients <= 16; clients *= 16)
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
      figures f = measure(d.addr, rows[i].method, rows[i].req, rows[i].len, clients, secs);
      printf("| %s | %d | %zu | %.3f | %.3f | %.0f | %d |\n", rows[i].name, clients, f.n, f.p50,
             f.p99, f.rps, f.errors);
      fflush(stdout);
    }
  printf("\nRequest sizes: MLP %zu bytes, GPT %zu bytes.", mlen, glen);
  char loadavg[64] = "";
  FILE *lf = fopen("/proc/loadavg", "r");
  if (lf && fgets(loadavg, sizeof loadavg, lf))
    printf(" Load average (1, 5, 15 min) at the end: %.14s (the machine is shared).", loadavg);
  if (lf) fclose(lf);
  printf("\n");
  th_daemon_stop(&d);
  free(mreq);
  free(greq);
  free(mlp);
  free(gpt);
  return 0;
}
