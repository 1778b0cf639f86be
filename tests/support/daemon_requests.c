/*
 * daemon_requests.c - PlanRequest builders and answer checks for the daemon suites (see
 * daemon_requests.h).
 */
#include "daemon_requests.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_support.h"

th_channel *th_daemon_open(th_daemon *d, const char *const *extra) {
  ck_assert_msg(th_daemon_start(d, NULL, extra), "shardpland did not come up");
  th_channel *c = th_connect(d->addr, NULL);
  ck_assert_ptr_nonnull(c);
  return c;
}

void th_daemon_close(th_daemon *d, th_channel *c) {
  th_close(c);
  ck_assert_int_eq(th_daemon_stop(d), 0);
}

char *th_mlp_text(void) {
  size_t len;
  char *t = sp_test_read_file(SP_SOURCE_DIR "/examples/mlp.mlir", &len);
  ck_assert_ptr_nonnull(t);
  return t;
}

char *th_gpt_text(int layers, bool backward) {
  char path[256], cmd[512];
  snprintf(path, sizeof path, "/tmp/sp-test-gpt-%d-%d-%d.mlir", layers, backward, (int)getpid());
  snprintf(cmd, sizeof cmd, "%s/shardplan-gen --model gpt --layers %d %s -o %s", SP_BIN_DIR,
           layers, backward ? "--backward" : "", path);
  ck_assert_int_eq(system(cmd), 0);
  size_t len;
  char *t = sp_test_read_file(path, &len);
  unlink(path);
  ck_assert_ptr_nonnull(t);
  return t;
}

uint8_t *th_plan_request(const char *mlir, req_opts o, size_t *len) {
  Shardplan__V1__PlanRequest r = SHARDPLAN__V1__PLAN_REQUEST__INIT;
  Shardplan__V1__PlanOptions po = SHARDPLAN__V1__PLAN_OPTIONS__INIT;
  Shardplan__V1__Cluster cl = SHARDPLAN__V1__CLUSTER__INIT;
  r.graph_case = SHARDPLAN__V1__PLAN_REQUEST__GRAPH_MLIR;
  r.mlir = (char *)mlir;
  po.mode = o.search ? SHARDPLAN__V1__PLAN_MODE__PLAN_MODE_SEARCH
                     : SHARDPLAN__V1__PLAN_MODE__PLAN_MODE_PROPAGATE;
  po.time_limit_seconds = o.time_limit;
  po.gap = o.gap;
  if (o.shape_auto) po.mesh_shape = SHARDPLAN__V1__MESH_SHAPE_SEARCH__MESH_SHAPE_AUTO;
  po.no_share_layers = o.no_share;
  if (o.placement_given) po.placement = SHARDPLAN__V1__PLACEMENT_SEARCH__PLACEMENT_GIVEN;
  r.options = &po;
  if (o.search) {
    cl.source_case = SHARDPLAN__V1__CLUSTER__SOURCE_EXAMPLE;
    cl.example = (char *)(o.example ? o.example : "one_machine_8gpu");
    r.cluster = &cl;
  }
  r.detail = o.full ? SHARDPLAN__V1__DETAIL__DETAIL_FULL : SHARDPLAN__V1__DETAIL__DETAIL_SUMMARY;
  *len = shardplan__v1__plan_request__get_packed_size(&r);
  uint8_t *buf = malloc(*len + 1);
  shardplan__v1__plan_request__pack(&r, buf);
  return buf;
}

Shardplan__V1__PlanResponse *th_plan_ok(th_channel *c, const char *mlir, req_opts o,
                                        th_result *raw) {
  size_t len;
  uint8_t *req = th_plan_request(mlir, o, &len);
  th_result r = th_call(c, TH_PLAN, req, len, 120000, NULL);
  free(req);
  ck_assert_msg(r.status == 0, "Plan failed: %d %s", r.status, r.details);
  Shardplan__V1__PlanResponse *p = shardplan__v1__plan_response__unpack(NULL, r.len, r.msg);
  ck_assert_ptr_nonnull(p);
  if (raw) *raw = r;
  else th_result_free(&r);
  return p;
}

/* The packed bytes of the plan field. */
static uint8_t *plan_bytes(const Shardplan__V1__PlanResponse *p, size_t *n) {
  *n = shardplan__v1__plan__get_packed_size(p->plan);
  uint8_t *b = malloc(*n + 1);
  shardplan__v1__plan__pack(p->plan, b);
  return b;
}

void th_assert_same_plan(const Shardplan__V1__PlanResponse *a,
                         const Shardplan__V1__PlanResponse *b) {
  size_t na, nb;
  uint8_t *pa = plan_bytes(a, &na), *pb = plan_bytes(b, &nb);
  ck_assert_uint_eq(na, nb);
  ck_assert_mem_eq(pa, pb, na);
  free(pa);
  free(pb);
}

char *th_replace_all(const char *s, const char *from, const char *to) {
  size_t fl = strlen(from), tl = strlen(to), n = 0;
  for (const char *p = s; (p = strstr(p, from)); p += fl) n++;
  char *out = malloc(strlen(s) + n * (tl + 1) + 1), *o = out;
  for (const char *p = s;;) {
    const char *q = strstr(p, from);
    if (!q) {
      strcpy(o, p);
      break;
    }
    memcpy(o, p, (size_t)(q - p));
    o += q - p;
    memcpy(o, to, tl);
    o += tl;
    p = q + fl;
  }
  return out;
}

int64_t th_wait_in_flight(th_channel *c, int64_t want, int max_ms, double *waited_ms,
                          int64_t *run) {
  int64_t inflight = -1, r = 0;
  double waited = 0;
  for (; waited <= max_ms; waited += 20) {
    if (th_stats(c, &r, &inflight, NULL) && inflight == want) break;
    usleep(20000);
  }
  if (waited_ms) *waited_ms = waited;
  if (run) *run = r;
  return inflight;
}

Shardplan__V1__PlanResponse *th_plan_cut_short(th_channel *c, const char *mlir, req_opts *o) {
  for (o->time_limit = 0.05; o->time_limit < 20; o->time_limit *= 2) {
    size_t len;
    uint8_t *req = th_plan_request(mlir, *o, &len);
    th_result r = th_call(c, TH_PLAN, req, len, 120000, NULL);
    free(req);
    if (r.status == 4 /* DEADLINE_EXCEEDED */) {
      th_result_free(&r);
      continue;
    }
    ck_assert_msg(r.status == 0, "Plan failed: %d %s", r.status, r.details);
    Shardplan__V1__PlanResponse *p = shardplan__v1__plan_response__unpack(NULL, r.len, r.msg);
    ck_assert_ptr_nonnull(p);
    th_result_free(&r);
    return p;
  }
  ck_abort_msg("propagation did not finish within a 20 s deadline");
  return NULL;
}
