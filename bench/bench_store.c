/*
 * bench_store.c - speed of the plan cache (store/store.h, SQLite backend): put, cache-hit get
 * (by key and by raw-request hash) from 1 and 8 threads, row pages, list pages, eviction, and
 * open with its integrity check, on a temporary database.
 *
 * usage: bench_store [PLANS]   (default 2000 plans of ~24 KB: 20 KB answer, 100 rows)
 * Prints Markdown table rows; bench/run.sh puts them in RESULTS.md.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ir/clock.h"
#include "store/store.h"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void key_of(int n, char out[65]) { snprintf(out, 65, "%032x%032x", n, n ^ 0x5a5a5a); }
static void raw_of(int n, char out[65]) { snprintf(out, 65, "%032x%032x", n ^ 0x777, n); }

static char g_blob[20000];
static char g_json[100][120], g_label[100][16];
static sp_store_row g_rows[5000];

static int put_plan(sp_store *s, int n, int rows) {
  sp_store_plan p = {.planner_version = "bench", .status = "optimal", .module_name = "mlp",
                     .mesh = "<[\"data\"=4, \"model\"=2]>", .gap = NAN, .total_cost = n,
                     .plan = g_blob, .plan_len = sizeof g_blob, .request = g_blob,
                     .request_len = 2000};
  key_of(n, p.key);
  raw_of(n, p.raw_hash);
  for (int i = 0; i < rows; i++)
    g_rows[i] = (sp_store_row){i % 5 == 4 ? "op" : "value", i, g_label[i % 100],
                               g_json[i % 100]};
  sp_err err;
  if (sp_store_put(s, &p, g_rows, (size_t)rows, &err) != SP_OK) {
    fprintf(stderr, "put: %s\n", err.msg);
    exit(1);
  }
  return 0;
}

typedef struct hit_job {
  sp_store *s;
  int n_plans, n_gets, by_raw;
  double *lat;
} hit_job;

static void *hit_thread(void *arg) {
  hit_job *j = arg;
  unsigned seed = (unsigned)(size_t)j;
  for (int i = 0; i < j->n_gets; i++) {
    char h[65];
    int n = rand_r(&seed) % j->n_plans;
    if (j->by_raw) raw_of(n, h);
    else key_of(n, h);
    sp_store_plan got;
    sp_err err;
    double t0 = sp_clock_now();
    int rc = j->by_raw ? sp_store_get_by_raw(j->s, h, SP_STORE_WITH_PLAN | SP_STORE_COUNT_HIT,
                                             &got, &err)
                       : sp_store_get(j->s, h, SP_STORE_WITH_PLAN | SP_STORE_COUNT_HIT, &got,
                                      &err);
    j->lat[i] = sp_clock_now() - t0;
    if (rc != SP_OK || got.plan_len != sizeof g_blob) {
      fprintf(stderr, "get: %s\n", err.msg);
      exit(1);
    }
    sp_store_plan_free(&got);
  }
  return NULL;
}

/* Cache-hit gets from `threads` threads; prints p50/p99 and gets per second. */
static void bench_hits(sp_store *s, int n_plans, int threads, int by_raw) {
  enum { GETS = 20000 };
  int per = GETS / threads;
  double *lat = malloc(sizeof(double) * (size_t)GETS);
  hit_job jobs[16];
  pthread_t th[16];
  double t0 = sp_clock_now();
  for (int t = 0; t < threads; t++) {
    jobs[t] = (hit_job){s, n_plans, per, by_raw, lat + (size_t)t * (size_t)per};
    pthread_create(&th[t], NULL, hit_thread, &jobs[t]);
  }
  for (int t = 0; t < threads; t++) pthread_join(th[t], NULL);
  double el = sp_clock_now() - t0;
  int n = per * threads;
  qsort(lat, (size_t)n, sizeof *lat, cmp_double);
  printf("| cache-hit get %s (20 KB answer), %d thread%s | %.1f us | %.1f us | %.0f gets/s |\n",
         by_raw ? "by raw hash" : "by key", threads, threads > 1 ? "s" : "",
         lat[n / 2] * 1e6, lat[n * 99 / 100] * 1e6, n / el);
  free(lat);
}

static double file_mb(const char *p) {
  struct stat sb;
  return stat(p, &sb) == 0 ? (double)sb.st_size / 1048576.0 : 0;
}

int main(int argc, char **argv) {
  int n_plans = argc > 1 ? atoi(argv[1]) : 2000;
  char dir[] = "/tmp/bench_store.XXXXXX", db[128], path[160];
  if (!mkdtemp(dir)) return 1;
  snprintf(db, sizeof db, "%s/plans.db", dir);
  for (size_t i = 0; i < sizeof g_blob; i++) g_blob[i] = (char)(i * 131);
  for (int i = 0; i < 100; i++) {
    snprintf(g_label[i], sizeof g_label[i], "%%arg%d", i);
    snprintf(g_json[i], sizeof g_json[i],
             "{\"sdy\":\"#sdy.sharding<@mesh, [{\\\"data\\\"}, {}]>\",\"index\":%d}", i);
  }
  sp_store_options o = {.path = db};
  sp_store *s;
  sp_err err;
  if (sp_store_open(&o, &s, &err) != SP_OK) {
    fprintf(stderr, "%s\n", err.msg);
    return 1;
  }
  printf("| operation | p50 | p99 | throughput |\n|---|---|---|---|\n");
  double t0 = sp_clock_now();
  for (int i = 0; i < n_plans; i++) put_plan(s, i, 100);
  double el = sp_clock_now() - t0;
  printf("| put (one transaction: 20 KB answer, 2 KB request, 100 rows), synchronous=NORMAL "
         "| | | %.0f plans/s (%.2f ms each) |\n", n_plans / el, el / n_plans * 1e3);
  sp_store_close(s);
  o.durable = true;
  sp_store_open(&o, &s, &err);
  t0 = sp_clock_now();
  for (int i = 0; i < 200; i++) put_plan(s, n_plans + i, 100);
  el = sp_clock_now() - t0;
  printf("| put, durable (synchronous=FULL: fsync per commit) | | | %.0f plans/s (%.2f ms "
         "each) |\n", 200 / el, el / 200 * 1e3);
  sp_store_close(s);
  o.durable = false;
  sp_store_open(&o, &s, &err);
  bench_hits(s, n_plans, 1, 0);
  bench_hits(s, n_plans, 1, 1);
  bench_hits(s, n_plans, 8, 0);

  /* Row pages of a 5000-row plan. */
  put_plan(s, 9999999, 5000);
  char key[65];
  key_of(9999999, key);
  const struct { int64_t off; const char *filter; const char *what; } pages[] = {
      {0, NULL, "first page"}, {3000, NULL, "offset 3000"}, {0, "arg4", "label filter"}};
  for (int k = 0; k < 3; k++) {
    enum { N = 500 };
    double lat[N];
    for (int i = 0; i < N; i++) {
      sp_store_row_query q = {.section = "value", .offset = pages[k].off, .limit = 50,
                              .label_contains = pages[k].filter};
      sp_store_row_page pg;
      double a = sp_clock_now();
      if (sp_store_rows(s, key, &q, &pg, &err) != SP_OK || pg.n != 50) {
        fprintf(stderr, "rows: %s\n", err.msg);
        return 1;
      }
      lat[i] = sp_clock_now() - a;
      sp_store_row_page_free(&pg);
    }
    qsort(lat, N, sizeof *lat, cmp_double);
    printf("| rows: page of 50 of a 5000-row plan, %s | %.1f us | %.1f us | |\n", pages[k].what,
           lat[N / 2] * 1e6, lat[N * 99 / 100] * 1e6);
  }
  {
    enum { N = 200 };
    double lat[N];
    for (int i = 0; i < N; i++) {
      sp_store_list_query q = {.offset = (i * 37) % n_plans, .limit = 50};
      sp_store_plan_list l;
      double a = sp_clock_now();
      sp_store_list(s, &q, &l, &err);
      lat[i] = sp_clock_now() - a;
      sp_store_plan_list_free(&l);
    }
    qsort(lat, N, sizeof *lat, cmp_double);
    printf("| list: page of 50 of %d plans, most recently used first | %.1f us | %.1f us | |\n",
           n_plans + 201, lat[N / 2] * 1e6, lat[N * 99 / 100] * 1e6);
  }
  sp_store_stats st;
  sp_store_stats_get(s, &st, &err);
  double db_mb = (double)st.used_bytes / 1048576.0;
  sp_store_close(s);

  /* Open with the integrity check, then without. */
  for (int check = 1; check >= 0; check--) {
    o.skip_integrity_check = !check;
    double a = sp_clock_now();
    sp_store_open(&o, &s, &err);
    double b = sp_clock_now();
    sp_store_close(s);
    printf("| open %s (%.0f MB database) | | | %.3f s |\n",
           check ? "with PRAGMA integrity_check" : "without integrity check", db_mb, b - a);
  }
  o.skip_integrity_check = false;

  /* Eviction of half the database. */
  sp_store_open(&o, &s, &err);
  int64_t n_ev = 0;
  double a = sp_clock_now();
  sp_store_evict(s, st.used_bytes / 2, &n_ev, &err);
  el = sp_clock_now() - a;
  sp_store_stats_get(s, &st, &err);
  printf("| evict to half the size: %lld plans | | | %.3f s; %.1f MB in use after, file %.1f MB"
         " |\n", (long long)n_ev, el, (double)st.used_bytes / 1048576.0, file_mb(db));
  sp_store_close(s);
  const char *suffix[] = {"", "-wal", "-shm"};
  for (int i = 0; i < 3; i++) {
    snprintf(path, sizeof path, "%s%s", db, suffix[i]);
    unlink(path);
  }
  rmdir(dir);
  return 0;
}
