/*
 * bench_soak.c - the daemon under a long mixed load: concurrent clients sending cache hits,
 * misses, bad requests, cancelled calls and calls whose deadline passes, for minutes.
 *
 *   build/bin/bench_soak [SECONDS] [CLIENTS]      (default 600 s, 16 clients)
 *
 * It starts build/bin/shardpland on 127.0.0.1:0 in a temporary folder (the daemon tests'
 * harness), warms four requests into the cache, then each client thread draws, per call:
 *   60% hit       one of the four warmed requests (expect OK)
 *   15% miss      the MLP example searched with a fresh seed: a new key (expect OK)
 *   10% bad       random bytes, or MLIR that does not parse (expect INVALID_ARGUMENT)
 *    8% cancel    a fresh 4-layer GPT search cancelled after 5 ms (expect CANCELLED, or OK
 *                 when it finished first)
 *    7% deadline  a fresh 4-layer GPT search with a 30 ms deadline (expect DEADLINE_EXCEEDED,
 *                 or OK)
 * and records the status. An answer outside the expected ones counts as unexpected (the run
 * fails). The daemon's RSS (VmRSS) is read after warm-up and every minute; hit latencies are
 * summarised per minute (p50, p99). At the end the daemon must still answer Health SERVING
 * and every warmed request must still be a hit with the same answer.
 *
 * Output is Markdown for bench/RESULTS.md. Client and server share the machine's cores.
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ir/clock.h"
#include "ir/file_read.h"
#include "ir/grow.h"
#include "shardplan/v1/planner.pb-c.h"
#include "support/daemon_harness.h"

#define PLAN "/shardplan.v1.Planner/Plan"
#define NWARM 4
#define MAX_MINUTES 240

enum { HIT, MISS, BAD, CANCEL, DEADLINE, NKINDS };
static const char *const kind_names[NKINDS] = {"hit", "miss", "bad", "cancel", "deadline"};
#define NSTATUS 17  /* gRPC status codes 0..16 */
static const char *const status_names[NSTATUS] = {
    "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
    "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
    "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
    "UNAUTHENTICATED"};

static char *generate(const char *args) {
  char path[] = "/tmp/sp_soak_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return NULL;
  close(fd);
  char cmd[512];
  snprintf(cmd, sizeof cmd, "%s/shardplan-gen %s -o %s", SP_BIN_DIR, args, path);
  char *t = NULL;
  if (system(cmd) == 0) sp_file_read(path, SIZE_MAX, &t, NULL);
  unlink(path);
  return t;
}

/* A Plan request for `mlir`: with the search (on the bundled 8-GPU cluster) and `seed`, or
 * propagation only. */
static uint8_t *request(const char *mlir, bool search, uint64_t seed, size_t *len) {
  Shardplan__V1__PlanRequest r = SHARDPLAN__V1__PLAN_REQUEST__INIT;
  Shardplan__V1__PlanOptions o = SHARDPLAN__V1__PLAN_OPTIONS__INIT;
  Shardplan__V1__Cluster c = SHARDPLAN__V1__CLUSTER__INIT;
  r.graph_case = SHARDPLAN__V1__PLAN_REQUEST__GRAPH_MLIR;
  r.mlir = (char *)mlir;
  o.mode = search ? SHARDPLAN__V1__PLAN_MODE__PLAN_MODE_SEARCH
                  : SHARDPLAN__V1__PLAN_MODE__PLAN_MODE_PROPAGATE;
  o.seed = seed;
  o.time_limit_seconds = 2;
  r.options = &o;
  if (search) {
    c.source_case = SHARDPLAN__V1__CLUSTER__SOURCE_EXAMPLE;
    c.example = (char *)"one_machine_8gpu";
    r.cluster = &c;
  }
  *len = shardplan__v1__plan_request__get_packed_size(&r);
  uint8_t *b = malloc(*len ? *len : 1);
  if (b) shardplan__v1__plan_request__pack(&r, b);
  return b;
}

static long rss_kb(pid_t pid) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  FILE *f = fopen(path, "r");
  long kb = -1;
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, "VmRSS:", 6) == 0) kb = strtol(line + 6, NULL, 10);
  if (f) fclose(f);
  return kb;
}

/* ------------------------------------------------------------------ the load */

typedef struct shared {
  const char *addr;
  double start, end;
  const char *mlp, *gpt;
  uint8_t *warm[NWARM];
  size_t warm_len[NWARM];
  atomic_uint_fast64_t seed;
} shared;

typedef struct client {
  shared *s;
  unsigned rng;
  long counts[NKINDS][NSTATUS];
  long unexpected;
  char first_unexpected[256];
  /* hit latencies (ms) with their minute */
  double *hit_ms;
  int *hit_min;
  size_t nhits, caphits;
} client;

static bool expected(int kind, int status) {
  switch (kind) {
    case HIT: case MISS: return status == 0;
    case BAD: return status == 3;
    case CANCEL: return status == 0 || status == 1;
    default: return status == 0 || status == 4;
  }
}

static void record_hit(client *c, double ms, int minute) {
  if (c->nhits == c->caphits) { /* two arrays of one capacity, grown to the same size */
    size_t ca = c->caphits, cb = c->caphits;
    if (sp_grow_z((void **)&c->hit_ms, &ca, c->nhits, sizeof *c->hit_ms) ||
        sp_grow_z((void **)&c->hit_min, &cb, c->nhits, sizeof *c->hit_min))
      return;
    c->caphits = ca;
  }
  c->hit_ms[c->nhits] = ms;
  c->hit_min[c->nhits++] = minute;
}

static void *run_client(void *arg) {
  client *c = arg;
  shared *s = c->s;
  th_channel *ch = th_connect(s->addr, NULL);
  if (!ch) return NULL;
  while (sp_clock_now() < s->end) {
    int draw = (int)(rand_r(&c->rng) % 100);
    int kind = draw < 60 ? HIT : draw < 75 ? MISS : draw < 85 ? BAD : draw < 93 ? CANCEL : DEADLINE;
    uint8_t *req = NULL;
    size_t len = 0;
    th_result r;
    double t0 = sp_clock_now();
    switch (kind) {
      case HIT: {
        int k = (int)(rand_r(&c->rng) % NWARM);
        r = th_call(ch, PLAN, s->warm[k], s->warm_len[k], 60000, NULL);
        break;
      }
      case MISS:
        req = request(s->mlp, true, atomic_fetch_add(&s->seed, 1), &len);
        r = th_call(ch, PLAN, req, len, 60000, NULL);
        break;
      case BAD:
        if (rand_r(&c->rng) % 2) {
          len = 1 + rand_r(&c->rng) % 256;
          req = malloc(len);
          for (size_t i = 0; req && i < len; i++) req[i] = (uint8_t)rand_r(&c->rng);
          if (req) req[0] = 0x0a; /* field 1 (mlir), length-delimited: a plausible start */
        } else {
          req = request("func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> { return %y }",
                        false, 0, &len);
        }
        r = th_call(ch, PLAN, req, len, 60000, NULL);
        break;
      case CANCEL:
        req = request(s->gpt, true, atomic_fetch_add(&s->seed, 1), &len);
        r = th_call_cancel(ch, PLAN, req, len, 5);
        break;
      default:
        req = request(s->gpt, true, atomic_fetch_add(&s->seed, 1), &len);
        r = th_call(ch, PLAN, req, len, 30, NULL);
        break;
    }
    int st = r.status >= 0 && r.status < NSTATUS ? r.status : 2;
    c->counts[kind][st]++;
    if (!expected(kind, st)) {
      if (c->unexpected++ == 0)
        snprintf(c->first_unexpected, sizeof c->first_unexpected, "%s: %s %s", kind_names[kind],
                 status_names[st], r.details ? r.details : "");
    }
    if (kind == HIT && st == 0) record_hit(c, r.ms, (int)((t0 - s->start) / 60.0));
    th_result_free(&r);
    free(req);
  }
  th_close(ch);
  return NULL;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  double seconds = argc > 1 ? atof(argv[1]) : 600;
  int nclients = argc > 2 ? atoi(argv[2]) : 16;
  if (seconds <= 0 || nclients < 1 || nclients > 256) {
    fprintf(stderr, "usage: bench_soak [SECONDS] [CLIENTS]\n");
    return 2;
  }
  char dir[] = "/tmp/sp_soak_dir_XXXXXX";
  if (!mkdtemp(dir)) return 1;
  th_daemon d;
  if (!th_daemon_start(&d, dir, NULL)) {
    fprintf(stderr, "bench_soak: the daemon did not start\n");
    return 1;
  }
  int rc = 1;
  shared s;
  memset(&s, 0, sizeof s);
  s.addr = d.addr;
  char *mlp = NULL;
  sp_file_read(SP_SOURCE_DIR "/examples/mlp.mlir", SIZE_MAX, &mlp, NULL);
  char *gpt = generate("--model gpt --layers 4 --hidden 256 --heads 4 --seq 64 --batch 8 --backward");
  char *small = generate("--model gpt --layers 1 --hidden 128 --heads 4 --seq 32 --batch 4");
  if (!mlp || !gpt || !small) goto done;
  s.mlp = mlp;
  s.gpt = gpt;
  s.warm[0] = request(mlp, false, 0, &s.warm_len[0]);
  s.warm[1] = request(mlp, true, 0, &s.warm_len[1]);
  s.warm[2] = request(small, false, 0, &s.warm_len[2]);
  s.warm[3] = request(small, true, 0, &s.warm_len[3]);
  atomic_init(&s.seed, 1000);
  /* Warm-up: each request once (a miss, planned and stored), then once more (a hit), whose
   * answer is the reference for the end. */
  th_channel *ch = th_connect(d.addr, NULL);
  th_result warm_answer[NWARM];
  memset(warm_answer, 0, sizeof warm_answer);
  for (int k = 0; k < NWARM; k++) {
    th_result first = th_call(ch, PLAN, s.warm[k], s.warm_len[k], 120000, NULL);
    int st = first.status;
    th_result_free(&first);
    if (st == 0) warm_answer[k] = th_call(ch, PLAN, s.warm[k], s.warm_len[k], 120000, NULL);
    if (st != 0 || warm_answer[k].status != 0) {
      fprintf(stderr, "bench_soak: warm-up request %d failed (status %d)\n", k, st);
      for (int j = 0; j <= k; j++) th_result_free(&warm_answer[j]);
      th_close(ch);
      goto done;
    }
  }
  long rss_start = rss_kb(d.pid);
  long rss_min[MAX_MINUTES];
  int nmin = 0;
  client *cs = calloc((size_t)nclients, sizeof *cs);
  pthread_t *th = calloc((size_t)nclients, sizeof *th);
  s.start = sp_clock_now();
  s.end = s.start + seconds;
  for (int i = 0; i < nclients; i++) {
    cs[i].s = &s;
    cs[i].rng = 12345u + (unsigned)i * 7919u;
    pthread_create(&th[i], NULL, run_client, &cs[i]);
  }
  while (sp_clock_now() < s.end && nmin < MAX_MINUTES) {
    double next = s.start + 60.0 * (nmin + 1);
    while (sp_clock_now() < next && sp_clock_now() < s.end) usleep(200000);
    rss_min[nmin++] = rss_kb(d.pid);
  }
  for (int i = 0; i < nclients; i++) pthread_join(th[i], NULL);
  double elapsed = sp_clock_now() - s.start;
  long rss_end = rss_kb(d.pid);

  /* After the load: still serving, and the warmed plans still hits with the same answer. */
  double hms;
  bool serving = th_health_serving(ch, &hms);
  int same = 0;
  for (int k = 0; k < NWARM; k++) {
    th_result r = th_call(ch, PLAN, s.warm[k], s.warm_len[k], 60000, NULL);
    same += r.status == 0 && r.len == warm_answer[k].len &&
            memcmp(r.msg, warm_answer[k].msg, r.len) == 0;
    th_result_free(&r);
  }

  long counts[NKINDS][NSTATUS] = {{0}}, unexpected = 0, total = 0;
  const char *first = "";
  for (int i = 0; i < nclients; i++) {
    for (int k = 0; k < NKINDS; k++)
      for (int st = 0; st < NSTATUS; st++) {
        counts[k][st] += cs[i].counts[k][st];
        total += cs[i].counts[k][st];
      }
    if (cs[i].unexpected && !*first) first = cs[i].first_unexpected;
    unexpected += cs[i].unexpected;
  }
  printf("### Soak: %d clients for %.0f s (bench_soak %.0f %d)\n\n", nclients, elapsed, seconds,
         nclients);
  printf("%ld requests (%.1f/s); %ld answered outside the expected statuses%s%s\n\n", total,
         (double)total / elapsed, unexpected, *first ? "; first: " : "", first);
  printf("| kind | requests | answers |\n|---|---:|---|\n");
  for (int k = 0; k < NKINDS; k++) {
    long n = 0;
    char ans[512] = "";
    size_t at = 0;
    for (int st = 0; st < NSTATUS; st++) {
      n += counts[k][st];
      if (counts[k][st] && at < sizeof ans)
        at += (size_t)snprintf(ans + at, sizeof ans - at, "%s%s %ld", at ? ", " : "",
                               status_names[st], counts[k][st]);
    }
    printf("| %s | %ld | %s |\n", kind_names[k], n, ans);
  }
  printf("\nDaemon RSS: %.1f MiB after warm-up, %.1f MiB at the end; per minute:", rss_start / 1024.0,
         rss_end / 1024.0);
  for (int m = 0; m < nmin; m++) printf(" %.1f", rss_min[m] / 1024.0);
  printf(" MiB\n\n| minute | hits | p50 ms | p99 ms |\n|---:|---:|---:|---:|\n");
  for (int m = 0; m < nmin; m++) {
    size_t n = 0;
    for (int i = 0; i < nclients; i++)
      for (size_t j = 0; j < cs[i].nhits; j++) n += cs[i].hit_min[j] == m;
    if (!n) continue;
    double *v = malloc(n * sizeof *v);
    size_t k = 0;
    for (int i = 0; i < nclients; i++)
      for (size_t j = 0; j < cs[i].nhits; j++)
        if (cs[i].hit_min[j] == m) v[k++] = cs[i].hit_ms[j];
    qsort(v, n, sizeof *v, cmp_double);
    printf("| %d | %zu | %.2f | %.2f |\n", m + 1, n, v[n / 2],
           v[(size_t)fmin((double)n - 1, ceil(0.99 * (double)n) - 1)]);
    free(v);
  }
  printf("\nAfter the load: Health %s; %d of %d warmed plans still hits with the same answer.\n",
         serving ? "SERVING" : "NOT SERVING", same, NWARM);
  rc = unexpected == 0 && serving && same == NWARM ? 0 : 1;
  for (int i = 0; i < nclients; i++) {
    free(cs[i].hit_ms);
    free(cs[i].hit_min);
  }
  free(cs);
  free(th);
  for (int k = 0; k < NWARM; k++) th_result_free(&warm_answer[k]);
  th_close(ch);
done:
  th_daemon_stop(&d);
  for (int k = 0; k < NWARM; k++) free(s.warm[k]);
  free(mlp);
  free(gpt);
  free(small);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "bench_soak: could not remove %s\n", dir);
  return rc;
}
