/*
 * daemon_requests.h - PlanRequest builders and answer checks shared by the daemon suites
 * (test_daemon.c, test_daemon_search.c): a daemon started with a client connected to it, the
 * bundled MLP example, generated GPT models, a
 * Plan call that must succeed, plan-byte comparison, text substitution for renamed graphs.
 *
 * Failures are Check assertions (these run inside a test). Memory: returned texts, requests
 * and responses are the caller's (free / shardplan__v1__plan_response__free_unpacked).
 */
#ifndef SP_DAEMON_REQUESTS_H
#define SP_DAEMON_REQUESTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon_harness.h"
#include "shardplan/v1/planner.pb-c.h"

#define TH_PLAN "/shardplan.v1.Planner/Plan"
#define TH_PLAN_STREAM "/shardplan.v1.Planner/PlanStream"

typedef struct req_opts {
  bool search;
  double time_limit;
  bool full;
  bool shape_auto;
  bool no_share;
  const char *example;
  double gap;
  bool placement_given;   /* the mesh's devices as they are: one search, no rank mapping */
} req_opts;

/* th_daemon_start in a new temporary folder with `extra` flags (may be NULL), asserting that
 * it comes up, and an insecure client channel to it. */
th_channel *th_daemon_open(th_daemon *d, const char *const *extra);
/* th_close(c), then th_daemon_stop(d), asserting that the daemon exits with status 0. */
void th_daemon_close(th_daemon *d, th_channel *c);

/* examples/mlp.mlir. */
char *th_mlp_text(void);
/* A GPT from shardplan-gen with `layers` layers (and its backward pass). */
char *th_gpt_text(int layers, bool backward);
/* A packed PlanRequest for MLIR text. */
uint8_t *th_plan_request(const char *mlir, req_opts o, size_t *len);
/* A Plan call that must succeed; the decoded response (`raw`, may be NULL: the call). */
Shardplan__V1__PlanResponse *th_plan_ok(th_channel *c, const char *mlir, req_opts o,
                                        th_result *raw);
/* A Plan whose search the deadline cuts short, asserting that it succeeds. The deadline also
 * bounds propagation, which takes longer on a loaded or sanitized build, so o->time_limit
 * starts at 50 ms and doubles while the answer is DEADLINE_EXCEEDED (propagation unfinished);
 * the limit that got past propagation is left in o->time_limit. */
Shardplan__V1__PlanResponse *th_plan_cut_short(th_channel *c, const char *mlir, req_opts *o);
/* Asserts equal packed `plan` fields. */
void th_assert_same_plan(const Shardplan__V1__PlanResponse *a,
                         const Shardplan__V1__PlanResponse *b);
/* `s` with every `from` replaced by `to` (malloc'd). */
char *th_replace_all(const char *s, const char *from, const char *to);
/* Polls GetStats every 20 ms until `want` searches are in flight (at most max_ms); returns the
 * number in flight at the end, *waited_ms the time it took, *run the searches run. */
int64_t th_wait_in_flight(th_channel *c, int64_t want, int max_ms, double *waited_ms,
                          int64_t *run);

#endif /* SP_DAEMON_REQUESTS_H */
