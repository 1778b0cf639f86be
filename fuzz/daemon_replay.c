/*
 * daemon_replay.c - replays PlanRequest files through the real daemon, for the coverage of
 * server/daemon, server/rpc, store/ and web/ as the service runs them (fuzz/coverage.sh):
 *
 *   fuzz_daemon_replay FILE_OR_DIR...
 *
 * Starts build/bin/shardpland on loopback with its dashboard (tests/support/daemon_harness.h),
 * sends every file (a folder: its files in name order) as a Plan call and as a PlanStream call
 * (30 s each), asks Health after each, then ListPlans, GetPlan and DeletePlan of the first
 * stored plan, GetStats, Purge of older versions, a few dashboard pages, and stops the daemon
 * with SIGTERM, so that an instrumented daemon writes its coverage on the way out. Exit 1
 * when the daemon does not start, stops serving, or does not exit cleanly.
 *
 * Memory: each file is read, sent and freed in turn.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon_harness.h"
#include "ir/err.h"
#include "ir/file_read.h"
#include "shardplan/v1/planner.pb-c.h"

#define SVC "/shardplan.v1.Planner/"

static int files, planned;   /* files sent; Plan calls answered OK */

static int by_name(const struct dirent **a, const struct dirent **b) {
  return strcmp((*a)->d_name, (*b)->d_name);
}

/* Sends one request file as Plan and as PlanStream; false when Health then fails. */
static bool replay_file(th_channel *ch, const char *path) {
  char *buf;
  size_t len;
  if (sp_file_read(path, 64u << 20, &buf, &len) != SP_OK) return true;
  th_result r = th_call(ch, SVC "Plan", buf, len, 30000, NULL);
  files++;
  planned += r.status == 0;
  th_result_free(&r);
  r = th_call(ch, SVC "PlanStream", buf, len, 30000, NULL);
  th_result_free(&r);
  free(buf);
  double ms;
  if (th_health_serving(ch, &ms)) return true;
  fprintf(stderr, "fuzz_daemon_replay: the daemon stopped serving after %s\n", path);
  return false;
}

static bool replay_path(th_channel *ch, const char *path) {
  struct stat st;
  if (stat(path, &st) != 0) return true;
  if (!S_ISDIR(st.st_mode)) return replay_file(ch, path);
  struct dirent **names;
  int n = scandir(path, &names, NULL, by_name);
  bool ok = true;
  for (int i = 0; i < n; i++) {
    char file[4096];
    snprintf(file, sizeof file, "%s/%s", path, names[i]->d_name);
    if (ok && names[i]->d_name[0] != '.' && stat(file, &st) == 0 && S_ISREG(st.st_mode))
      ok = replay_file(ch, file);
    free(names[i]);
  }
  free(names);
  return ok;
}

/* A message call whose answer is ignored (the coverage is what matters here). */
#define CALL(method, Type, type, msg)                                        \
  do {                                                                       \
    size_t n_ = shardplan__v1__##type##__get_packed_size(msg);               \
    uint8_t *b_ = malloc(n_ + 1);                                            \
    shardplan__v1__##type##__pack(msg, b_);                                  \
    th_result r_ = th_call(ch, SVC method, b_, n_, 30000, NULL);             \
    free(b_);                                                                \
    th_result_free(&r_);                                                     \
  } while (0)

/* The cache calls on the first stored plan. */
static void cache_calls(th_channel *ch) {
  Shardplan__V1__ListPlansRequest lr = SHARDPLAN__V1__LIST_PLANS_REQUEST__INIT;
  size_t n = shardplan__v1__list_plans_request__get_packed_size(&lr);
  uint8_t *b = malloc(n + 1);
  shardplan__v1__list_plans_request__pack(&lr, b);
  th_result r = th_call(ch, SVC "ListPlans", b, n, 30000, NULL);
  free(b);
  Shardplan__V1__ListPlansResponse *l =
      r.status == 0 && r.msg ? shardplan__v1__list_plans_response__unpack(NULL, r.len, r.msg)
                             : NULL;
  if (l && l->n_plans > 0) {
    Shardplan__V1__GetPlanRequest g = SHARDPLAN__V1__GET_PLAN_REQUEST__INIT;
    g.key = l->plans[0]->key;
    g.detail = SHARDPLAN__V1__DETAIL__DETAIL_FULL;
    CALL("GetPlan", GetPlanRequest, get_plan_request, &g);
    Shardplan__V1__DeletePlanRequest d = SHARDPLAN__V1__DELETE_PLAN_REQUEST__INIT;
    d.key = l->plans[0]->key;
    CALL("DeletePlan", DeletePlanRequest, delete_plan_request, &d);
  }
  if (l) shardplan__v1__list_plans_response__free_unpacked(l, NULL);
  th_result_free(&r);
  Shardplan__V1__GetStatsRequest s = SHARDPLAN__V1__GET_STATS_REQUEST__INIT;
  CALL("GetStats", GetStatsRequest, get_stats_request, &s);
  Shardplan__V1__PurgeRequest p = SHARDPLAN__V1__PURGE_REQUEST__INIT;
  p.older_than_version = true;
  CALL("Purge", PurgeRequest, purge_request, &p);
}

/* GET `path` from the dashboard at "HOST:PORT" (HTTP/1.0, the answer read and dropped). */
static void http_get(const char *addr, const char *path) {
  char host[64];
  const char *colon = strrchr(addr, ':');
  if (!colon || (size_t)(colon - addr) >= sizeof host) return;
  snprintf(host, sizeof host, "%.*s", (int)(colon - addr), addr);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1))};
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return;
  if (inet_pton(AF_INET, host, &sa.sin_addr) == 1 &&
      connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0) {
    char req[512];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nHost: %s\r\n\r\n", path, addr);
    if (write(fd, req, (size_t)n) == n) {
      char buf[4096];
      while (read(fd, buf, sizeof buf) > 0) continue;
    }
  }
  close(fd);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: fuzz_daemon_replay FILE_OR_DIR...\n");
    return 2;
  }
  static const char *const flags[] = {"--http-listen", "127.0.0.1:0", NULL};
  th_daemon d;
  if (!th_daemon_start(&d, NULL, flags)) return 1;
  th_channel *ch = th_connect(d.addr, NULL);
  bool ok = true;
  for (int i = 1; i < argc && ok; i++) ok = replay_path(ch, argv[i]);
  if (ok) {
    cache_calls(ch);
    static const char *const pages[] = {"/", "/plans", "/api/plans", "/api/stats", "/metrics",
                                        "/nowhere"};
    for (size_t i = 0; d.http_addr[0] && i < sizeof pages / sizeof pages[0]; i++)
      http_get(d.http_addr, pages[i]);
  }
  th_close(ch);
  fprintf(stderr, "fuzz_daemon_replay: %d files, %d planned, %d refused\n", files, planned,
          files - planned);
  int status = th_daemon_stop(&d);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", d.data_dir);
  if (system(cmd) != 0) fprintf(stderr, "fuzz_daemon_replay: cannot remove %s\n", d.data_dir);
  if (status != 0) fprintf(stderr, "fuzz_daemon_replay: the daemon exited with %d\n", status);
  return ok && status == 0 ? 0 : 1;
}
