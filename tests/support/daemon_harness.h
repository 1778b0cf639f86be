/*
 * daemon_harness.h - for the daemon's integration tests: start the real shardpland on a
 * loopback port in a fresh data folder, and a minimal gRPC C-core client that can send any
 * bytes to any method (truncated protobuf, unknown methods, missing tokens), stream, and
 * cancel.
 *
 * Memory: a daemon handle owns its folder name and pipes; responses and details are malloc'd
 * for the caller.
 */
#ifndef SP_DAEMON_HARNESS_H
#define SP_DAEMON_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct th_daemon {
  pid_t pid;
  char addr[256];        /* "127.0.0.1:PORT" */
  char data_dir[256];
  int stdout_fd;
  char log_path[300];    /* its stderr */
  char http_addr[256];   /* "127.0.0.1:PORT" of the dashboard, "" when it is off */
} th_daemon;

/* Starts build/bin/shardpland with `extra` flags (NULL-terminated; may be NULL) on
 * 127.0.0.1:0 in `data_dir` (NULL: a new temporary folder) and waits for "ready" (10 s).
 * Returns false with a message on stderr when it does not come up. */
bool th_daemon_start(th_daemon *d, const char *data_dir, const char *const *extra);
/* The same with another daemon program (e.g. the test build shardpland-faults) and extra
 * environment variables (NULL-terminated "NAME=VALUE" strings; may be NULL). */
bool th_daemon_start_prog(th_daemon *d, const char *program, const char *data_dir,
                          const char *const *extra, const char *const *env);
/* SIGTERM, then waits (10 s) and returns the exit status (-1: had to be killed). */
int th_daemon_stop(th_daemon *d);

typedef struct th_result {
  int status;            /* gRPC status code */
  char *details;         /* status message (malloc'd, may be "") */
  uint8_t *msg;          /* the last response message (malloc'd), NULL if none */
  size_t len;
  int nmsgs;             /* messages received (streaming) */
  uint8_t **msgs;        /* every message received, in order (malloc'd; lens[i] bytes) */
  size_t *lens;
  double ms;             /* wall time of the call */
  char retry_after[32];  /* trailing metadata retry-after-ms, "" if absent */
} th_result;

void th_result_free(th_result *r);

typedef struct th_channel th_channel;
/* `tls_root_pem`: NULL for an insecure channel, else the server certificate to trust (the
 * target name is overridden to "localhost"). */
th_channel *th_connect(const char *addr, const char *tls_root_pem);
void th_close(th_channel *c);

/* A unary (or server-streaming: every message is read, the last kept) call. `token` NULL: no
 * authorization metadata. timeout_ms 0: 60 s. */
th_result th_call(th_channel *c, const char *method, const void *req, size_t len,
                  int timeout_ms, const char *token);

/* th_call (no token) that shows each message to `watch` as it arrives, on the calling thread
 * (a streaming call's progress events, e.g. to act once a search has a plan). */
typedef void (*th_watch_fn)(void *ctx, const uint8_t *msg, size_t len);
th_result th_call_watch(th_channel *c, const char *method, const void *req, size_t len,
                        int timeout_ms, th_watch_fn watch, void *ctx);

/* A call started now and cancelled after `cancel_after_ms`. */
th_result th_call_cancel(th_channel *c, const char *method, const void *req, size_t len,
                         int cancel_after_ms);

/* GET `path` from the dashboard at `http_addr` ("127.0.0.1:PORT"), HTTP/1.0: the HTTP status,
 * and the whole response, headers and body, in *response (malloc'd, NUL-terminated); -1 (and
 * NULL) when it cannot connect or the answer is not HTTP. */
int th_http_get(const char *http_addr, const char *path, char **response);

/* Common shortcuts. */
bool th_health_serving(th_channel *c, double *ms);
/* GetStats; fills searches_run and searches_in_flight (return false on failure). */
bool th_stats(th_channel *c, int64_t *searches_run, int64_t *in_flight, int64_t *coalesced);

#endif /* SP_DAEMON_HARNESS_H */
