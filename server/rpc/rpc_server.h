/*
 * rpc_server.h - the gRPC plumbing of the daemon (gRPC C core 1.51 only): listening, the
 * completion-queue threads, method dispatch, one context per call, replies from any thread.
 *
 * Methods are registered by path before start; each gets `backlog` requests posted on every
 * completion queue, and every queue also keeps generic requests posted, so a call to a path
 * nobody registered is answered UNIMPLEMENTED at once instead of hanging until its deadline
 * (gRPC 1.51 leaves such a call waiting when no generic request is outstanding). A new call
 * reposts its replacement before anything else; the request payload (one message) arrives
 * with the call. The server posts RECV_CLOSE_ON_SERVER on every call, so a client that
 * cancels (or whose deadline passes) is noticed while the call waits: the call's cancel hook
 * runs (on a queue thread) and the call is marked cancelled.
 *
 * Handlers run on the queue threads and must not block: a handler either replies at once or
 * keeps the call (sp_rpc_call_ref is implied: the call stays alive until its final reply) and
 * replies later from any thread. Server streaming: sp_rpc_call_send() queues messages that go
 * out one at a time in order, then sp_rpc_call_finish() sends the status after them.
 *
 * Authentication: with a token set, every method except those registered `public` needs
 * `authorization: Bearer <token>` metadata; others get UNAUTHENTICATED without reaching the
 * handler.
 *
 * Shutdown (sp_rpc_server_shutdown): stop accepting, cancel calls still open, drain and join the
 * queue threads. A reply to a cancelled call is dropped harmlessly.
 *
 * Memory: the server owns its calls; a call is freed when its final reply is sent and gRPC
 * has reported the call closed. Payloads handed to handlers belong to the call (valid until
 * the final reply). Messages to send are copied.
 */
#ifndef SP_RPC_SERVER_H
#define SP_RPC_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/err.h"

typedef struct sp_rpc_server sp_rpc_server;
typedef struct sp_rpc_call sp_rpc_call;

/* gRPC status codes (grpc/status.h values; restated so callers need no gRPC header). */
enum {
  SP_RPC_OK = 0,
  SP_RPC_CANCELLED = 1,
  SP_RPC_UNKNOWN = 2,
  SP_RPC_INVALID_ARGUMENT = 3,
  SP_RPC_DEADLINE_EXCEEDED = 4,
  SP_RPC_NOT_FOUND = 5,
  SP_RPC_RESOURCE_EXHAUSTED = 8,
  SP_RPC_FAILED_PRECONDITION = 9,
  SP_RPC_UNIMPLEMENTED = 12,
  SP_RPC_INTERNAL = 13,
  SP_RPC_UNAVAILABLE = 14,
  SP_RPC_UNAUTHENTICATED = 16
};

/* Runs on a queue thread for each new call of the method. `method_data` is what was given at
 * registration. */
typedef void (*sp_rpc_handler)(sp_rpc_call *call, void *method_data);
/* Runs once, on a queue thread, when a call still waiting for its final reply is cancelled by
 * the client or its deadline passes. */
typedef void (*sp_rpc_cancel_hook)(sp_rpc_call *call, void *arg);

typedef struct sp_rpc_server_options {
  int threads;                 /* completion-queue threads; 0: 2 */
  int backlog;                 /* requests posted per method per queue; 0: 8 */
  int64_t max_message_bytes;   /* larger requests get RESOURCE_EXHAUSTED; 0: 64 MiB */
  const char *token;           /* bearer token, NULL: none */
  const char *tls_cert_pem;    /* both set: TLS */
  const char *tls_key_pem;
} sp_rpc_server_options;

int sp_rpc_server_new(const sp_rpc_server_options *o, sp_rpc_server **out, sp_err *err);
/* Registers `path` ("/shardplan.v1.Planner/Plan"); before start. `public_method`: no token
 * needed (health checks). */
int sp_rpc_server_add_method(sp_rpc_server *s, const char *path, bool public_method,
                             sp_rpc_handler fn, void *method_data, sp_err *err);
/* Binds an address ("127.0.0.1:0", "[::1]:50051", "unix:/run/sp.sock"); before start.
 * *port_out gets the bound port (0 for unix sockets). */
int sp_rpc_server_listen(sp_rpc_server *s, const char *addr, int *port_out, sp_err *err);
/* Starts the queue threads. */
int sp_rpc_server_start(sp_rpc_server *s, sp_err *err);
/* Stops accepting, cancels open calls, joins the threads. Idempotent. */
void sp_rpc_server_shutdown(sp_rpc_server *s);
/* Shuts down if needed and frees. NULL is a no-op. */
void sp_rpc_server_free(sp_rpc_server *s);

/* ---- one call ---- */

const char *sp_rpc_call_method(const sp_rpc_call *c);    /* the path */
const uint8_t *sp_rpc_call_payload(const sp_rpc_call *c, size_t *len);  /* NULL: none sent */
/* Milliseconds left before the call's deadline (INT64_MAX: none; <= 0: passed). */
int64_t sp_rpc_call_ms_left(const sp_rpc_call *c);
/* The deadline as CLOCK_MONOTONIC milliseconds (INT64_MAX: none). */
int64_t sp_rpc_call_deadline_ms(const sp_rpc_call *c);
bool sp_rpc_call_cancelled(const sp_rpc_call *c);
/* Start time of the call (CLOCK_MONOTONIC ms). */
int64_t sp_rpc_call_start_ms(const sp_rpc_call *c);
/* A peer description for logs ("ipv4:127.0.0.1:53012"); owned by the call. */
const char *sp_rpc_call_peer(sp_rpc_call *c);

/* Sets the hook run if the call is cancelled while waiting (call before returning from the
 * handler). Returns false when the call was already cancelled (the hook will not run). */
bool sp_rpc_call_on_cancel(sp_rpc_call *c, sp_rpc_cancel_hook fn, void *arg);

/* Final reply: an optional message (status OK) or an error status with `details`.
 * `retry_after_ms` > 0 adds trailing metadata `retry-after-ms`. Any thread; once per call. */
void sp_rpc_call_reply(sp_rpc_call *c, int status, const void *msg, size_t len,
                       const char *details, int64_t retry_after_ms);
/* Streaming: queue one message (copied). Returns false once the call is cancelled. */
bool sp_rpc_call_send(sp_rpc_call *c, const void *msg, size_t len);
/* Streaming: the status after the queued messages. */
void sp_rpc_call_finish(sp_rpc_call *c, int status, const char *details);

#endif /* SP_RPC_SERVER_H */
