/*
 * daemon_harness.c - start/stop the real daemon and a raw gRPC C-core client (see
 * daemon_harness.h). One pluck queue per call; every call is synchronous.
 */
#include "daemon_harness.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "grpc/health/v1/health.pb-c.h"
#include "ir/clock.h"
#include "shardplan/v1/planner.pb-c.h"

/* ------------------------------------------------------------------ the daemon */

bool th_daemon_start(th_daemon *d, const char *data_dir, const char *const *extra) {
  return th_daemon_start_prog(d, SP_BIN_DIR "/shardpland", data_dir, extra, NULL);
}

bool th_daemon_start_prog(th_daemon *d, const char *program, const char *data_dir,
                          const char *const *extra, const char *const *env) {
  memset(d, 0, sizeof *d);
  if (data_dir) {
    snprintf(d->data_dir, sizeof d->data_dir, "%s", data_dir);
  } else {
    snprintf(d->data_dir, sizeof d->data_dir, "/tmp/sp-daemon-test-XXXXXX");
    if (!mkdtemp(d->data_dir)) return false;
  }
  snprintf(d->log_path, sizeof d->log_path, "%s/daemon.log", d->data_dir);
  int fds[2];
  if (pipe(fds)) return false;
  const char *argv[64];
  int n = 0;
  argv[n++] = program;
  argv[n++] = "--grpc-listen";
  argv[n++] = "127.0.0.1:0";
  argv[n++] = "--http-listen";
  argv[n++] = "off";
  argv[n++] = "--data-dir";
  argv[n++] = d->data_dir;
  for (int i = 0; extra && extra[i] && n < 62; i++) argv[n++] = extra[i];
  argv[n] = NULL;
  pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    dup2(fds[1], 1);
    int lf = open(d->log_path, O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (lf >= 0) dup2(lf, 2);
    close(fds[0]);
    for (int i = 0; env && env[i]; i++) putenv((char *)env[i]);
    execv(argv[0], (char *const *)argv);
    _exit(127);
  }
  close(fds[1]);
  d->pid = pid;
  d->stdout_fd = fds[0];
  char buf[4096];
  size_t have = 0;
  double start = 1e3 * sp_clock_now();
  while (1e3 * sp_clock_now() - start < 20000) {
    struct pollfd p = {d->stdout_fd, POLLIN, 0};
    if (poll(&p, 1, 200) <= 0) continue;
    ssize_t r = read(d->stdout_fd, buf + have, sizeof buf - 1 - have);
    if (r <= 0) break;
    have += (size_t)r;
    buf[have] = '\0';
    const char *l = strstr(buf, "grpc listening on ");
    if (l && !d->addr[0]) {
      l += strlen("grpc listening on ");
      size_t k = strcspn(l, " \n");
      if (l[k]) snprintf(d->addr, sizeof d->addr, "%.*s", (int)k, l);
    }
    const char *h = strstr(buf, "dashboard http://");
    if (h && !d->http_addr[0]) {
      h += strlen("dashboard http://");
      size_t k = strcspn(h, "/ \n");
      if (h[k]) snprintf(d->http_addr, sizeof d->http_addr, "%.*s", (int)k, h);
    }
    if (strstr(buf, "shardpland: ready\n") && d->addr[0]) return true;
  }
  fprintf(stderr, "daemon did not come up; stdout:\n%.*s\n(log in %s)\n", (int)have, buf,
          d->log_path);
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  return false;
}

int th_daemon_stop(th_daemon *d) {
  if (d->pid <= 0) return -1;
  kill(d->pid, SIGTERM);
  int st = 0;
  double start = 1e3 * sp_clock_now();
  while (1e3 * sp_clock_now() - start < 15000) {
    pid_t r = waitpid(d->pid, &st, WNOHANG);
    if (r == d->pid) {
      close(d->stdout_fd);
      d->pid = 0;
      return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    }
    usleep(20000);
  }
  kill(d->pid, SIGKILL);
  waitpid(d->pid, &st, 0);
  close(d->stdout_fd);
  d->pid = 0;
  return -1;
}

/* ------------------------------------------------------------------ the client */

struct th_channel {
  grpc_channel *ch;
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static void init_grpc(void) { grpc_init(); }

th_channel *th_connect(const char *addr, const char *tls_root_pem) {
  pthread_once(&once, init_grpc);
  th_channel *c = calloc(1, sizeof *c);
  grpc_channel_credentials *cr;
  grpc_arg arg;
  grpc_channel_args args = {0, NULL};
  if (tls_root_pem) {
    cr = grpc_ssl_credentials_create(tls_root_pem, NULL, NULL, NULL);
    arg.type = GRPC_ARG_STRING;
    arg.key = (char *)GRPC_SSL_TARGET_NAME_OVERRIDE_ARG;
    arg.value.string = (char *)"localhost";
    args.num_args = 1;
    args.args = &arg;
  } else {
    cr = grpc_insecure_credentials_create();
  }
  c->ch = grpc_channel_create(addr, cr, &args);
  grpc_channel_credentials_release(cr);
  return c;
}

void th_close(th_channel *c) {
  if (!c) return;
  grpc_channel_destroy(c->ch);
  free(c);
}

void th_result_free(th_result *r) {
  free(r->details);
  free(r->msg);
  for (int i = 0; i < r->nmsgs && r->msgs; i++) free(r->msgs[i]);
  free(r->msgs);
  free(r->lens);
  memset(r, 0, sizeof *r);
}

static gpr_timespec deadline_in(int ms) {
  return gpr_time_add(gpr_now(GPR_CLOCK_REALTIME), gpr_time_from_millis(ms, GPR_TIMESPAN));
}

static void take_message(th_result *r, grpc_byte_buffer *bb) {
  grpc_byte_buffer_reader rd;
  grpc_byte_buffer_reader_init(&rd, bb);
  grpc_slice s = grpc_byte_buffer_reader_readall(&rd);
  free(r->msg);
  r->len = GRPC_SLICE_LENGTH(s);
  r->msg = malloc(r->len ? r->len : 1);
  memcpy(r->msg, GRPC_SLICE_START_PTR(s), r->len);
  grpc_slice_unref(s);
  grpc_byte_buffer_reader_destroy(&rd);
  grpc_byte_buffer_destroy(bb);
  uint8_t **msgs = realloc(r->msgs, ((size_t)r->nmsgs + 1) * sizeof *msgs);
  size_t *lens = realloc(r->lens, ((size_t)r->nmsgs + 1) * sizeof *lens);
  if (msgs) r->msgs = msgs;
  if (lens) r->lens = lens;
  uint8_t *copy = msgs && lens ? malloc(r->len ? r->len : 1) : NULL;
  if (!copy) return;   /* out of memory: the last message is still in msg */
  memcpy(copy, r->msg, r->len);
  r->msgs[r->nmsgs] = copy;
  r->lens[r->nmsgs] = r->len;
  r->nmsgs++;
}

static th_result run_call(th_channel *c, const char *method, const void *req, size_t len,
                          int timeout_ms, const char *token, int cancel_after_ms,
                          th_watch_fn watch, void *watch_ctx) {
  th_result r;
  memset(&r, 0, sizeof r);
  double t0 = 1e3 * sp_clock_now();
  grpc_completion_queue *cq = grpc_completion_queue_create_for_pluck(NULL);
  grpc_slice mslice = grpc_slice_from_copied_string(method);
  grpc_call *call = grpc_channel_create_call(c->ch, NULL, GRPC_PROPAGATE_DEFAULTS, cq, mslice,
                                             NULL, deadline_in(timeout_ms ? timeout_ms : 60000),
                                             NULL);
  grpc_slice_unref(mslice);
  grpc_metadata md[1];
  char auth[512];
  size_t nmd = 0;
  if (token) {
    snprintf(auth, sizeof auth, "Bearer %s", token);
    md[0].key = grpc_slice_from_static_string("authorization");
    md[0].value = grpc_slice_from_copied_string(auth);
    nmd = 1;
  }
  grpc_slice body = grpc_slice_from_copied_buffer((const char *)req, len);
  grpc_byte_buffer *send = grpc_raw_byte_buffer_create(&body, 1);
  grpc_slice_unref(body);
  grpc_metadata_array init_md, trailing;
  grpc_metadata_array_init(&init_md);
  grpc_metadata_array_init(&trailing);
  grpc_op ops[4];
  memset(ops, 0, sizeof ops);
  ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
  ops[0].data.send_initial_metadata.count = nmd;
  ops[0].data.send_initial_metadata.metadata = nmd ? md : NULL;
  ops[1].op = GRPC_OP_SEND_MESSAGE;
  ops[1].data.send_message.send_message = send;
  ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
  ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
  ops[3].data.recv_initial_metadata.recv_initial_metadata = &init_md;
  int tag_a, tag_m, tag_s;
  grpc_call_start_batch(call, ops, 4, &tag_a, NULL);
  grpc_status_code status;
  grpc_slice details;
  const char *errstr = NULL;
  grpc_op sop;
  memset(&sop, 0, sizeof sop);
  sop.op = GRPC_OP_RECV_STATUS_ON_CLIENT;
  sop.data.recv_status_on_client.status = &status;
  sop.data.recv_status_on_client.status_details = &details;
  sop.data.recv_status_on_client.trailing_metadata = &trailing;
  sop.data.recv_status_on_client.error_string = &errstr;
  grpc_call_start_batch(call, &sop, 1, &tag_s, NULL);
  bool got_status = false;
  if (cancel_after_ms > 0) {
    if (grpc_completion_queue_pluck(cq, &tag_s, deadline_in(cancel_after_ms), NULL).type ==
        GRPC_OP_COMPLETE)
      got_status = true;
    else
      grpc_call_cancel(call, NULL);
  }
  grpc_completion_queue_pluck(cq, &tag_a, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
  for (;;) {
    grpc_byte_buffer *in = NULL;
    grpc_op mop;
    memset(&mop, 0, sizeof mop);
    mop.op = GRPC_OP_RECV_MESSAGE;
    mop.data.recv_message.recv_message = &in;
    if (grpc_call_start_batch(call, &mop, 1, &tag_m, NULL) != GRPC_CALL_OK) break;
    grpc_event ev = grpc_completion_queue_pluck(cq, &tag_m, gpr_inf_future(GPR_CLOCK_REALTIME),
                                                NULL);
    if (!ev.success || !in) break;
    take_message(&r, in);
    if (watch && r.msg) watch(watch_ctx, r.msg, r.len);
  }
  if (!got_status)
    grpc_completion_queue_pluck(cq, &tag_s, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
  r.status = (int)status;
  r.details = grpc_slice_to_c_string(details);
  grpc_slice_unref(details);
  if (errstr) gpr_free((void *)errstr);
  for (size_t i = 0; i < trailing.count; i++)
    if (grpc_slice_str_cmp(trailing.metadata[i].key, "retry-after-ms") == 0)
      snprintf(r.retry_after, sizeof r.retry_after, "%.*s",
               (int)GRPC_SLICE_LENGTH(trailing.metadata[i].value),
               (const char *)GRPC_SLICE_START_PTR(trailing.metadata[i].value));
  grpc_metadata_array_destroy(&init_md);
  grpc_metadata_array_destroy(&trailing);
  grpc_byte_buffer_destroy(send);
  if (nmd) grpc_slice_unref(md[0].value);
  grpc_call_unref(call);
  grpc_completion_queue_shutdown(cq);
  while (grpc_completion_queue_pluck(cq, NULL, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
         GRPC_QUEUE_SHUTDOWN) {
  }
  grpc_completion_queue_destroy(cq);
  r.ms = 1e3 * sp_clock_now() - t0;
  return r;
}

th_result th_call(th_channel *c, const char *method, const void *req, size_t len,
                  int timeout_ms, const char *token) {
  return run_call(c, method, req, len, timeout_ms, token, 0, NULL, NULL);
}

th_result th_call_watch(th_channel *c, const char *method, const void *req, size_t len,
                        int timeout_ms, th_watch_fn watch, void *ctx) {
  return run_call(c, method, req, len, timeout_ms, NULL, 0, watch, ctx);
}

th_result th_call_cancel(th_channel *c, const char *method, const void *req, size_t len,
                         int cancel_after_ms) {
  return run_call(c, method, req, len, 120000, NULL, cancel_after_ms, NULL, NULL);
}

bool th_health_serving(th_channel *c, double *ms) {
  th_result r = th_call(c, "/grpc.health.v1.Health/Check", "", 0, 5000, NULL);
  bool ok = false;
  if (r.status == 0 && r.msg) {
    Grpc__Health__V1__HealthCheckResponse *h =
        grpc__health__v1__health_check_response__unpack(NULL, r.len, r.msg);
    ok = h && h->status == GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING;
    if (h) grpc__health__v1__health_check_response__free_unpacked(h, NULL);
  }
  if (ms) *ms = r.ms;
  th_result_free(&r);
  return ok;
}

bool th_stats(th_channel *c, int64_t *searches_run, int64_t *in_flight, int64_t *coalesced) {
  th_result r = th_call(c, "/shardplan.v1.Planner/GetStats", "", 0, 5000, NULL);
  bool ok = false;
  if (r.status == 0) {
    Shardplan__V1__Stats *s = shardplan__v1__stats__unpack(NULL, r.len, r.msg ? r.msg
                                                                             : (uint8_t *)"");
    if (s) {
      if (searches_run) *searches_run = s->searches_run;
      if (in_flight) *in_flight = s->searches_in_flight;
      if (coalesced) *coalesced = s->coalesced;
      shardplan__v1__stats__free_unpacked(s, NULL);
      ok = true;
    }
  }
  th_result_free(&r);
  return ok;
}

/* ---------------------------------------------------------------- the dashboard */

int th_http_get(const char *http_addr, const char *path, char **response) {
  *response = NULL;
  char host[256];
  snprintf(host, sizeof host, "%s", http_addr);
  char *colon = strrchr(host, ':');
  if (!colon) return -1;
  *colon = '\0';
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1))};
  if (inet_pton(AF_INET, host, &a.sin_addr) != 1) return -1;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
    close(fd);
    return -1;
  }
  char req[1024];
  int n = snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nHost: %s\r\n\r\n", path, http_addr);
  size_t cap = 1 << 16, have = 0;
  char *buf = malloc(cap);
  bool ok = buf && n > 0 && write(fd, req, (size_t)n) == n;
  for (ssize_t r = 1; ok && r > 0;) {
    if (have + 1 >= cap) {
      char *bigger = realloc(buf, cap * 2);
      if (!bigger) {
        ok = false;
        break;
      }
      buf = bigger;
      cap *= 2;
    }
    r = read(fd, buf + have, cap - 1 - have);
    if (r > 0) have += (size_t)r;
    else if (r < 0 && errno != EINTR) ok = false;
    else if (r < 0) r = 1;
  }
  close(fd);
  int status = -1;
  if (ok) {
    buf[have] = '\0';
    if (sscanf(buf, "HTTP/1.%*d %d", &status) != 1) status = -1;
  }
  if (status < 0) {
    free(buf);
    return -1;
  }
  *response = buf;
  return status;
}
