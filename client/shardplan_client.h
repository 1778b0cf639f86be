/*
 * shardplan_client.h - the C client library of the shardplan daemon (shardpland).
 *
 * One header, one shared library (libshardplan_client.so, pkg-config name shardplan_client).
 * Messages are the protobuf-c types of proto/shardplan/v1 (installed beside this header):
 * build a Shardplan__V1__PlanRequest, call sp_client_plan, read the Shardplan__V1__PlanResponse,
 * release it with sp_client_free. Transport: gRPC C core, one channel per sp_client.
 *
 *     sp_client *c;
 *     sp_client_error e;
 *     sp_client_options o = {.target = "127.0.0.1:50051"};
 *     if (sp_client_open(&o, &c, &e) != SP_CLIENT_OK) { fprintf(stderr, "%s\n", e.message); }
 *     Shardplan__V1__PlanRequest req = SHARDPLAN__V1__PLAN_REQUEST__INIT;
 *     req.graph_case = SHARDPLAN__V1__PLAN_REQUEST__GRAPH_MLIR;
 *     req.mlir = text;
 *     Shardplan__V1__PlanResponse *resp;
 *     if (sp_client_plan(c, &req, 60000, &resp, &e) == SP_CLIENT_OK) {
 *       printf("%s %s\n", resp->key, resp->cache_hit ? "hit" : "miss");
 *       sp_client_free(resp);
 *     }
 *     sp_client_close(c);
 *
 * Results. Every call returns an sp_client_code: SP_CLIENT_OK, a gRPC status code the server
 * (or gRPC) answered with (1..16, same numbers as grpc_status_code), or one of the client's own
 * codes (>= 100). The error struct, when given, gets a message naming what failed, and for
 * UNAVAILABLE from a busy server the delay it asked for (its `retry-after-ms` trailer).
 * SP_CLIENT_UNREACHABLE replaces UNAVAILABLE when no connection to the server could be made.
 * sp_client_exit_code maps a result to the `shardplan` command's exit code (table below).
 *
 * Timeouts: each call takes a timeout in milliseconds (0: none); it becomes the call's gRPC
 * deadline, which the daemon also uses to bound its search.
 *
 * Threads: an sp_client may be used by several threads at once (each call has its own
 * completion queue; the channel is shared). Responses belong to the caller.
 *
 * Exit codes of the `shardplan` command (sp_client_exit_code):
 *   0  success
 *   1  internal error (the server failed: INTERNAL, UNKNOWN, DATA_LOSS, ...; or unreadable
 *      response)
 *   2  usage (bad command line)
 *   3  bad input (INVALID_ARGUMENT, RESOURCE_EXHAUSTED, OUT_OF_RANGE, FAILED_PRECONDITION,
 *      or an input file that cannot be read)
 *   4  not found (NOT_FOUND: no plan with that key)
 *   5  deadline (DEADLINE_EXCEEDED: no valid plan by the deadline)
 *   6  unavailable (UNAVAILABLE: the server is busy or shutting down, retry later; or a
 *      health check answered NOT_SERVING)
 *   7  unreachable (no connection to the server)
 *   8  auth (UNAUTHENTICATED, PERMISSION_DENIED: missing or wrong token)
 *   9  unimplemented (UNIMPLEMENTED: the server does not know the method)
 */
#ifndef SHARDPLAN_CLIENT_H
#define SHARDPLAN_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "grpc/health/v1/health.pb-c.h"
#include "shardplan/v1/planner.pb-c.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sp_client sp_client;

typedef enum sp_client_code {
  SP_CLIENT_OK = 0,
  /* 1..16: gRPC status codes, as the server or gRPC answered. */
  SP_CLIENT_CANCELLED = 1,
  SP_CLIENT_UNKNOWN = 2,
  SP_CLIENT_INVALID_ARGUMENT = 3,
  SP_CLIENT_DEADLINE_EXCEEDED = 4,
  SP_CLIENT_NOT_FOUND = 5,
  SP_CLIENT_ALREADY_EXISTS = 6,
  SP_CLIENT_PERMISSION_DENIED = 7,
  SP_CLIENT_RESOURCE_EXHAUSTED = 8,
  SP_CLIENT_FAILED_PRECONDITION = 9,
  SP_CLIENT_ABORTED = 10,
  SP_CLIENT_OUT_OF_RANGE = 11,
  SP_CLIENT_UNIMPLEMENTED = 12,
  SP_CLIENT_INTERNAL = 13,
  SP_CLIENT_UNAVAILABLE = 14,
  SP_CLIENT_DATA_LOSS = 15,
  SP_CLIENT_UNAUTHENTICATED = 16,
  /* The client's own. */
  SP_CLIENT_UNREACHABLE = 100,   /* no connection to the server */
  SP_CLIENT_BAD_INPUT = 101,     /* a bad argument, or a file that cannot be read */
  SP_CLIENT_NOMEM = 102,         /* out of memory */
  SP_CLIENT_PROTOCOL = 103       /* the server's answer does not decode */
} sp_client_code;

#define SP_CLIENT_MSG_MAX 1024

typedef struct sp_client_error {
  int code;                        /* an sp_client_code */
  char message[SP_CLIENT_MSG_MAX]; /* NUL-terminated; empty on success */
  int64_t retry_after_ms;          /* UNAVAILABLE from a busy server: its hint; else 0 */
} sp_client_error;

typedef struct sp_client_options {
  const char *target;          /* "HOST:PORT", "unix:PATH"; NULL: $SHARDPLAN_SERVER, else
                                  "127.0.0.1:50051" */
  const char *token;           /* bearer token sent as `authorization: Bearer ...`; NULL: none */
  const char *tls_ca_pem;      /* PEM roots: TLS, verifying the server against them */
  bool tls;                    /* TLS with the system's roots (when tls_ca_pem is NULL) */
  const char *tls_server_name; /* the name the certificate must carry, if not the target's */
  int64_t max_message_bytes;   /* largest answer accepted; 0: 1 GiB */
} sp_client_options;

/* Opens a channel to the daemon (connecting lazily, on the first call). */
int sp_client_open(const sp_client_options *o, sp_client **out, sp_client_error *err);
/* NULL is a no-op. No call may be in flight. */
void sp_client_close(sp_client *c);
/* The target the client talks to. */
const char *sp_client_target(const sp_client *c);

/* Plan: the answer, from the cache or the engine. */
int sp_client_plan(sp_client *c, const Shardplan__V1__PlanRequest *req, int64_t timeout_ms,
                   Shardplan__V1__PlanResponse **out, sp_client_error *err);

/* PlanStream: `progress` (may be NULL) is called for each progress event as it arrives, on
 * the calling thread; then the plan is returned as by sp_client_plan. */
typedef void (*sp_client_progress_fn)(const Shardplan__V1__Progress *p, void *user);
int sp_client_plan_stream(sp_client *c, const Shardplan__V1__PlanRequest *req,
                          int64_t timeout_ms, sp_client_progress_fn progress, void *user,
                          Shardplan__V1__PlanResponse **out, sp_client_error *err);

int sp_client_get_plan(sp_client *c, const char *key, Shardplan__V1__Detail detail,
                       int64_t timeout_ms, Shardplan__V1__PlanResponse **out,
                       sp_client_error *err);
/* One page; page_token NULL or "" for the first. */
int sp_client_list_plans(sp_client *c, int32_t page_size, const char *page_token,
                         int64_t timeout_ms, Shardplan__V1__ListPlansResponse **out,
                         sp_client_error *err);
int sp_client_delete_plan(sp_client *c, const char *key, int64_t timeout_ms, bool *deleted,
                          sp_client_error *err);
int sp_client_purge(sp_client *c, bool older_than_version, bool all, int64_t timeout_ms,
                    int64_t *deleted, sp_client_error *err);
int sp_client_get_stats(sp_client *c, int64_t timeout_ms, Shardplan__V1__Stats **out,
                        sp_client_error *err);
/* grpc.health.v1.Health/Check of `service` ("" or NULL: the server as a whole). *status is
 * the answer (GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING = 1, ...). */
int sp_client_health(sp_client *c, const char *service, int64_t timeout_ms, int *status,
                     sp_client_error *err);

/* Any unary method by path ("/shardplan.v1.Planner/GetStats") with raw request bytes; the
 * answer's bytes are malloc'd into *resp (free with free()). For tests and tools. */
int sp_client_call_raw(sp_client *c, const char *method, const void *req, size_t req_len,
                       int64_t timeout_ms, uint8_t **resp, size_t *resp_len,
                       sp_client_error *err);

/* Releases any message returned by this library. NULL is a no-op. */
void sp_client_free(void *message);

/* "ok", "invalid argument", "unreachable", ... */
const char *sp_client_code_name(int code);
/* The `shardplan` command's exit code for a result (table above). */
int sp_client_exit_code(int code);

#ifdef __cplusplus
}
#endif

#endif /* SHARDPLAN_CLIENT_H */
