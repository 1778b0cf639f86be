/*
 * rpc_server.c - gRPC C core plumbing: completion-queue threads, posted requests, one context
 * per call, replies and server streaming from any thread (see rpc_server.h).
 *
 * A call context has three tags (new call, close, send) so one completion queue event names
 * both the call and what finished. Invariants:
 *   - every new call first reposts a replacement request of the same method on its queue;
 *   - RECV_CLOSE_ON_SERVER is started on every call at once (it completes when the client
 *     cancels, the deadline passes, or after the status went out);
 *   - at most one send batch is in flight per call (c->sending), under c->mu;
 *   - refs: one for the close batch, one for the final reply; the call is freed at zero.
 * Shutdown order (feasibility note, pitfall 7): shutdown_and_notify, cancel_all_calls, pluck
 * the notification, shut each queue down, the threads drain to QUEUE_SHUTDOWN and exit,
 * destroy the server and the queues.
 */
#include "rpc/rpc_server.h"

#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>
#include <openssl/crypto.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir/clock.h"

#define MAX_METHODS 24

typedef struct method {
  char *path;
  void *handle;          /* grpc_server_register_method's */
  bool public_method;
  sp_rpc_handler fn;
  void *data;
} method;

struct sp_rpc_server {
  grpc_server *srv;
  int nthreads, backlog;
  grpc_completion_queue **cqs;
  pthread_t *threads;
  int nstarted;
  method methods[MAX_METHODS];
  int nmethods;
  char *auth;            /* "Bearer <token>", or NULL */
  size_t auth_len;
  grpc_server_credentials *tls;
  int64_t max_message_bytes;
  bool started, stopped;
};

enum { TAG_NEW, TAG_CLOSE, TAG_SEND };
typedef struct tag {
  int kind;
  sp_rpc_call *call;
} tag;

typedef struct outmsg {
  grpc_byte_buffer *bb;
  struct outmsg *next;
} outmsg;

struct sp_rpc_call {
  sp_rpc_server *srv;
  int cq;
  method *m;             /* NULL: generic */
  tag t_new, t_close, t_send;
  grpc_call *call;
  gpr_timespec deadline;
  grpc_metadata_array md;
  grpc_call_details details;   /* generic calls */
  grpc_byte_buffer *payload;
  grpc_slice data;
  bool has_data;
  char *path;            /* generic: the method asked for */
  int close_cancelled;
  int64_t start_ms, deadline_ms;
  char *peer;

  pthread_mutex_t mu;
  int refs;
  bool cancelled, closed;
  bool finish_queued, status_sent, init_md_sent, sending;
  outmsg *qhead, *qtail;
  grpc_byte_buffer *in_flight;
  int finish_status;
  grpc_slice finish_details;
  bool has_details;
  grpc_metadata trailing[1];
  char retry_buf[24];
  int ntrailing;
  sp_rpc_cancel_hook hook;
  void *hook_arg;
};

/* ------------------------------------------------------------------ calls */

static void call_free(sp_rpc_call *c) {
  if (c->call) grpc_call_unref(c->call);
  grpc_metadata_array_destroy(&c->md);
  grpc_call_details_destroy(&c->details);
  if (c->payload) grpc_byte_buffer_destroy(c->payload);
  if (c->has_data) grpc_slice_unref(c->data);
  if (c->has_details) grpc_slice_unref(c->finish_details);
  if (c->in_flight) grpc_byte_buffer_destroy(c->in_flight);
  for (outmsg *o = c->qhead, *n; o; o = n) {
    n = o->next;
    grpc_byte_buffer_destroy(o->bb);
    free(o);
  }
  if (c->peer) gpr_free(c->peer);
  free(c->path);
  pthread_mutex_destroy(&c->mu);
  free(c);
}

static void call_unref_locked_release(sp_rpc_call *c) {
  /* c->mu held; releases it. */
  int left = --c->refs;
  pthread_mutex_unlock(&c->mu);
  if (left == 0) call_free(c);
}

/* Posts a request for method `m` (NULL: generic) on queue `cq`. */
static int post_request(sp_rpc_server *s, int cq, method *m) {
  sp_rpc_call *c = calloc(1, sizeof *c);
  if (!c) return SP_ENOMEM;
  c->srv = s;
  c->cq = cq;
  c->m = m;
  c->t_new = (tag){TAG_NEW, c};
  c->t_close = (tag){TAG_CLOSE, c};
  c->t_send = (tag){TAG_SEND, c};
  pthread_mutex_init(&c->mu, NULL);
  grpc_metadata_array_init(&c->md);
  grpc_call_details_init(&c->details);
  grpc_call_error e;
  if (m)
    e = grpc_server_request_registered_call(s->srv, m->handle, &c->call, &c->deadline, &c->md,
                                            &c->payload, s->cqs[cq], s->cqs[cq], &c->t_new);
  else
    e = grpc_server_request_call(s->srv, &c->call, &c->details, &c->md, s->cqs[cq], s->cqs[cq],
                                 &c->t_new);
  if (e != GRPC_CALL_OK) {
    call_free(c);
    return SP_EINTERNAL;
  }
  return SP_OK;
}

/* Starts the next send batch if none is in flight (c->mu held). */
static void pump_locked(sp_rpc_call *c) {
  if (c->sending || c->status_sent) return;
  grpc_op ops[3];
  memset(ops, 0, sizeof ops);
  size_t n = 0;
  outmsg *o = c->qhead;
  if (!o && !c->finish_queued) return;
  if (!c->init_md_sent) {
    ops[n].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[n].data.send_initial_metadata.count = 0;
    n++;
    c->init_md_sent = true;
  }
  if (o) {
    c->qhead = o->next;
    if (!c->qhead) c->qtail = NULL;
    c->in_flight = o->bb;
    free(o);
    ops[n].op = GRPC_OP_SEND_MESSAGE;
    ops[n].data.send_message.send_message = c->in_flight;
    n++;
  }
  if (c->finish_queued && !c->qhead) {
    ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
    ops[n].data.send_status_from_server.status = (grpc_status_code)c->finish_status;
    ops[n].data.send_status_from_server.status_details = c->has_details ? &c->finish_details
                                                                         : NULL;
    ops[n].data.send_status_from_server.trailing_metadata_count = (size_t)c->ntrailing;
    ops[n].data.send_status_from_server.trailing_metadata = c->ntrailing ? c->trailing : NULL;
    n++;
    c->status_sent = true;
  }
  c->sending = true;
  if (grpc_call_start_batch(c->call, ops, n, &c->t_send, NULL) != GRPC_CALL_OK) {
    /* Cannot happen with one batch in flight; drop what we have and end the call's reply. */
    c->sending = false;
    if (c->in_flight) {
      grpc_byte_buffer_destroy(c->in_flight);
      c->in_flight = NULL;
    }
    if (c->status_sent) c->refs--; /* the reply ref; the close ref keeps c alive */
  }
}

static grpc_byte_buffer *make_bb(const void *msg, size_t len) {
  grpc_slice s = grpc_slice_from_copied_buffer((const char *)msg, len);
  grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&s, 1);
  grpc_slice_unref(s);
  return bb;
}

bool sp_rpc_call_send(sp_rpc_call *c, const void *msg, size_t len) {
  pthread_mutex_lock(&c->mu);
  bool ok = !c->cancelled && !c->finish_queued;
  if (ok) {
    outmsg *o = malloc(sizeof *o);
    if (!o) {
      pthread_mutex_unlock(&c->mu);
      return false;
    }
    o->bb = make_bb(msg, len);
    o->next = NULL;
    if (c->qtail) c->qtail->next = o; else c->qhead = o;
    c->qtail = o;
    pump_locked(c);
  }
  pthread_mutex_unlock(&c->mu);
  return ok;
}

static void queue_finish_locked(sp_rpc_call *c, int status, const char *details,
                                int64_t retry_after_ms) {
  if (c->finish_queued) return;
  c->finish_queued = true;
  c->finish_status = status;
  if (details && *details) {
    c->finish_details = grpc_slice_from_copied_string(details);
    c->has_details = true;
  }
  if (retry_after_ms > 0) {
    snprintf(c->retry_buf, sizeof c->retry_buf, "%lld", (long long)retry_after_ms);
    c->trailing[0].key = grpc_slice_from_static_string("retry-after-ms");
    c->trailing[0].value = grpc_slice_from_static_string(c->retry_buf);
    c->ntrailing = 1;
  }
}

void sp_rpc_call_finish(sp_rpc_call *c, int status, const char *details) {
  pthread_mutex_lock(&c->mu);
  queue_finish_locked(c, status, details, 0);
  pump_locked(c);
  pthread_mutex_unlock(&c->mu);
}

void sp_rpc_call_reply(sp_rpc_call *c, int status, const void *msg, size_t len,
                       const char *details, int64_t retry_after_ms) {
  pthread_mutex_lock(&c->mu);
  if (msg && status == SP_RPC_OK && !c->finish_queued) {
    outmsg *o = malloc(sizeof *o);
    if (o) {
      o->bb = make_bb(msg, len);
      o->next = NULL;
      if (c->qtail) c->qtail->next = o; else c->qhead = o;
      c->qtail = o;
    } else {
      status = SP_RPC_RESOURCE_EXHAUSTED;
      details = "out of memory";
    }
  }
  queue_finish_locked(c, status, details, retry_after_ms);
  pump_locked(c);
  pthread_mutex_unlock(&c->mu);
}

const char *sp_rpc_call_method(const sp_rpc_call *c) { return c->m ? c->m->path : c->path; }

const uint8_t *sp_rpc_call_payload(const sp_rpc_call *c, size_t *len) {
  if (!c->has_data) {
    *len = 0;
    return NULL;
  }
  *len = GRPC_SLICE_LENGTH(c->data);
  return GRPC_SLICE_START_PTR(c->data);
}

int64_t sp_rpc_call_deadline_ms(const sp_rpc_call *c) { return c->deadline_ms; }
int64_t sp_rpc_call_ms_left(const sp_rpc_call *c) {
  return c->deadline_ms == INT64_MAX ? INT64_MAX : c->deadline_ms - sp_clock_now_ms();
}
int64_t sp_rpc_call_start_ms(const sp_rpc_call *c) { return c->start_ms; }

bool sp_rpc_call_cancelled(const sp_rpc_call *c) {
  sp_rpc_call *m = (sp_rpc_call *)c;
  pthread_mutex_lock(&m->mu);
  bool r = m->cancelled;
  pthread_mutex_unlock(&m->mu);
  return r;
}

const char *sp_rpc_call_peer(sp_rpc_call *c) {
  if (!c->peer) c->peer = grpc_call_get_peer(c->call);
  return c->peer ? c->peer : "?";
}

bool sp_rpc_call_on_cancel(sp_rpc_call *c, sp_rpc_cancel_hook fn, void *arg) {
  pthread_mutex_lock(&c->mu);
  bool ok = !c->cancelled;
  if (ok) {
    c->hook = fn;
    c->hook_arg = arg;
  }
  pthread_mutex_unlock(&c->mu);
  return ok;
}

/* ------------------------------------------------------------------ events */

static bool authorized(const sp_rpc_server *s, const sp_rpc_call *c) {
  if (!s->auth || (c->m && c->m->public_method)) return true;
  for (size_t i = 0; i < c->md.count; i++) {
    const grpc_metadata *md = &c->md.metadata[i];
    if (grpc_slice_str_cmp(md->key, "authorization") != 0) continue;
    size_t n = GRPC_SLICE_LENGTH(md->value);
    if (n == s->auth_len && CRYPTO_memcmp(GRPC_SLICE_START_PTR(md->value), s->auth, n) == 0)
      return true;
  }
  return false;
}

static void on_new_call(sp_rpc_server *s, sp_rpc_call *c) {
  post_request(s, c->cq, c->m);   /* the replacement first (pitfall 3) */
  c->start_ms = sp_clock_now_ms();
  gpr_timespec dl = c->m ? c->deadline : c->details.deadline;
  gpr_timespec now = gpr_now(dl.clock_type);
  if (gpr_time_cmp(dl, gpr_inf_future(dl.clock_type)) == 0) {
    c->deadline_ms = INT64_MAX;
  } else {
    gpr_timespec left = gpr_time_sub(dl, now);
    c->deadline_ms = c->start_ms + (int64_t)left.tv_sec * 1000 + left.tv_nsec / 1000000;
  }
  if (!c->m) {
    c->path = grpc_slice_to_c_string(c->details.method);
  }
  if (c->payload) {
    grpc_byte_buffer_reader r;
    if (grpc_byte_buffer_reader_init(&r, c->payload)) {
      c->data = grpc_byte_buffer_reader_readall(&r);
      c->has_data = true;
      grpc_byte_buffer_reader_destroy(&r);
    }
  }
  c->refs = 2;   /* close batch + final reply */
  grpc_op op;
  memset(&op, 0, sizeof op);
  op.op = GRPC_OP_RECV_CLOSE_ON_SERVER;
  op.data.recv_close_on_server.cancelled = &c->close_cancelled;
  if (grpc_call_start_batch(c->call, &op, 1, &c->t_close, NULL) != GRPC_CALL_OK) c->refs--;

  if (!c->m) {
    char msg[512];
    snprintf(msg, sizeof msg, "unknown method %s (shardplan serves /shardplan.v1.Planner/* and "
             "/grpc.health.v1.Health/Check)", c->path ? c->path : "?");
    sp_rpc_call_reply(c, SP_RPC_UNIMPLEMENTED, NULL, 0, msg, 0);
    return;
  }
  if (!authorized(s, c)) {
    sp_rpc_call_reply(c, SP_RPC_UNAUTHENTICATED, NULL, 0,
                      "missing or wrong bearer token: send metadata 'authorization: Bearer "
                      "<token>' with the token of the server's --token-file", 0);
    return;
  }
  c->m->fn(c, c->m->data);
}

static void on_close(sp_rpc_call *c) {
  pthread_mutex_lock(&c->mu);
  c->closed = true;
  sp_rpc_cancel_hook hook = NULL;
  void *arg = NULL;
  if (c->close_cancelled && !c->status_sent) {
    c->cancelled = true;
    hook = c->hook;
    arg = c->hook_arg;
    c->hook = NULL;
  } else if (c->close_cancelled) {
    c->cancelled = true;
  }
  pthread_mutex_unlock(&c->mu);
  if (hook) hook(c, arg);
  pthread_mutex_lock(&c->mu);
  call_unref_locked_release(c);
}

static void on_send(sp_rpc_call *c) {
  pthread_mutex_lock(&c->mu);
  c->sending = false;
  if (c->in_flight) {
    grpc_byte_buffer_destroy(c->in_flight);
    c->in_flight = NULL;
  }
  if (c->status_sent) {
    call_unref_locked_release(c);
    return;
  }
  pump_locked(c);
  pthread_mutex_unlock(&c->mu);
}

static void *cq_thread(void *arg) {
  sp_rpc_server *s = ((void **)arg)[0];
  grpc_completion_queue *cq = ((void **)arg)[1];
  free(arg);
  for (;;) {
    grpc_event ev = grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    if (ev.type == GRPC_QUEUE_SHUTDOWN) break;
    if (ev.type != GRPC_OP_COMPLETE) continue;
    tag *t = ev.tag;
    sp_rpc_call *c = t->call;
    switch (t->kind) {
      case TAG_NEW:
        if (!ev.success) {   /* the server is shutting down: no call came */
          call_free(c);
          break;
        }
        on_new_call(s, c);
        break;
      case TAG_CLOSE: on_close(c); break;
      case TAG_SEND: on_send(c); break;
    }
  }
  return NULL;
}

/* ------------------------------------------------------------------ server */

int sp_rpc_server_new(const sp_rpc_server_options *o, sp_rpc_server **out, sp_err *err) {
  *out = NULL;
  sp_rpc_server *s = calloc(1, sizeof *s);
  if (!s) return sp_err_set(err, SP_ENOMEM, "out of memory");
  s->nthreads = o && o->threads > 0 ? o->threads : 2;
  s->backlog = o && o->backlog > 0 ? o->backlog : 8;
  s->max_message_bytes = o && o->max_message_bytes > 0 ? o->max_message_bytes : 64LL << 20;
  if (o && o->token) {
    size_t n = strlen(o->token) + 8;
    s->auth = malloc(n);
    if (!s->auth) goto fail;
    snprintf(s->auth, n, "Bearer %s", o->token);
    s->auth_len = strlen(s->auth);
  }
  grpc_init();
  grpc_arg args[3];
  memset(args, 0, sizeof args);
  args[0].type = GRPC_ARG_INTEGER;
  args[0].key = (char *)GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH;
  args[0].value.integer = s->max_message_bytes > INT32_MAX ? INT32_MAX : (int)s->max_message_bytes;
  args[1].type = GRPC_ARG_INTEGER;
  args[1].key = (char *)GRPC_ARG_MAX_SEND_MESSAGE_LENGTH;
  args[1].value.integer = -1;
  args[2].type = GRPC_ARG_INTEGER;   /* a second daemon on the same port must fail, not share */
  args[2].key = (char *)GRPC_ARG_ALLOW_REUSEPORT;
  args[2].value.integer = 0;
  grpc_channel_args ca = {3, args};
  s->srv = grpc_server_create(&ca, NULL);
  s->cqs = calloc((size_t)s->nthreads, sizeof *s->cqs);
  s->threads = calloc((size_t)s->nthreads, sizeof *s->threads);
  if (!s->srv || !s->cqs || !s->threads) goto fail;
  for (int i = 0; i < s->nthreads; i++) {
    s->cqs[i] = grpc_completion_queue_create_for_next(NULL);
    grpc_server_register_completion_queue(s->srv, s->cqs[i], NULL);
  }
  if (o && o->tls_cert_pem && o->tls_key_pem) {
    grpc_ssl_pem_key_cert_pair pair = {o->tls_key_pem, o->tls_cert_pem};
    s->tls = grpc_ssl_server_credentials_create_ex(NULL, &pair, 1,
                                                   GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE, NULL);
    if (!s->tls) {
      sp_err_set(err, SP_EINVAL, "cannot use the TLS certificate and key");
      sp_rpc_server_free(s);
      return SP_EINVAL;
    }
  }
  *out = s;
  return SP_OK;
fail:
  sp_rpc_server_free(s);
  return sp_err_set(err, SP_ENOMEM, "out of memory creating the gRPC server");
}

int sp_rpc_server_add_method(sp_rpc_server *s, const char *path, bool public_method,
                             sp_rpc_handler fn, void *method_data, sp_err *err) {
  if (s->started || s->nmethods == MAX_METHODS)
    return sp_err_set(err, SP_EINVAL, "cannot register %s", path);
  method *m = &s->methods[s->nmethods];
  m->path = strdup(path);
  if (!m->path) return sp_err_set(err, SP_ENOMEM, "out of memory");
  m->handle = grpc_server_register_method(s->srv, m->path, NULL,
                                          GRPC_SRM_PAYLOAD_READ_INITIAL_BYTE_BUFFER, 0);
  if (!m->handle) {
    free(m->path);
    return sp_err_set(err, SP_EINVAL, "gRPC refused to register %s", path);
  }
  m->public_method = public_method;
  m->fn = fn;
  m->data = method_data;
  s->nmethods++;
  return SP_OK;
}

int sp_rpc_server_listen(sp_rpc_server *s, const char *addr, int *port_out, sp_err *err) {
  grpc_server_credentials *cr = s->tls ? s->tls : grpc_insecure_server_credentials_create();
  int port = grpc_server_add_http2_port(s->srv, addr, cr);
  if (!s->tls) grpc_server_credentials_release(cr);
  if (port == 0)
    return sp_err_set(err, SP_EIO, "cannot listen on %s (address in use, not permitted, or "
                      "malformed)", addr);
  if (port_out) *port_out = strncmp(addr, "unix:", 5) == 0 ? 0 : port;
  return SP_OK;
}

int sp_rpc_server_start(sp_rpc_server *s, sp_err *err) {
  grpc_server_start(s->srv);
  s->started = true;
  for (int q = 0; q < s->nthreads; q++) {
    for (int m = 0; m < s->nmethods; m++)
      for (int k = 0; k < s->backlog; k++)
        if (post_request(s, q, &s->methods[m])) return sp_err_set(err, SP_ENOMEM, "cannot post");
    for (int k = 0; k < s->backlog; k++)
      if (post_request(s, q, NULL)) return sp_err_set(err, SP_ENOMEM, "cannot post");
  }
  for (int q = 0; q < s->nthreads; q++) {
    void **arg = malloc(2 * sizeof *arg);
    if (!arg) return sp_err_set(err, SP_ENOMEM, "out of memory");
    arg[0] = s;
    arg[1] = s->cqs[q];
    if (pthread_create(&s->threads[q], NULL, cq_thread, arg)) {
      free(arg);
      return sp_err_set(err, SP_EINTERNAL, "cannot start a gRPC thread");
    }
    s->nstarted++;
  }
  return SP_OK;
}

void sp_rpc_server_shutdown(sp_rpc_server *s) {
  if (!s || !s->srv || s->stopped) return;
  s->stopped = true;
  grpc_completion_queue *sq = grpc_completion_queue_create_for_pluck(NULL);
  static int shutdown_tag;
  grpc_server_shutdown_and_notify(s->srv, sq, &shutdown_tag);
  grpc_server_cancel_all_calls(s->srv);
  grpc_completion_queue_pluck(sq, &shutdown_tag, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
  grpc_completion_queue_shutdown(sq);
  grpc_completion_queue_destroy(sq);
  for (int q = 0; s->cqs && q < s->nthreads; q++)
    if (s->cqs[q]) grpc_completion_queue_shutdown(s->cqs[q]);
  if (s->nstarted) {
    for (int q = 0; q < s->nstarted; q++) pthread_join(s->threads[q], NULL);
    s->nstarted = 0;
  } else {   /* no threads: drain the queues here */
    for (int q = 0; q < s->nthreads; q++) {
      grpc_event ev;
      while ((ev = grpc_completion_queue_next(s->cqs[q], gpr_inf_future(GPR_CLOCK_REALTIME),
                                              NULL)).type != GRPC_QUEUE_SHUTDOWN)
        if (ev.type == GRPC_OP_COMPLETE && ((tag *)ev.tag)->kind == TAG_NEW)
          call_free(((tag *)ev.tag)->call);
    }
  }
}

void sp_rpc_server_free(sp_rpc_server *s) {
  if (!s) return;
  if (s->srv) {
    sp_rpc_server_shutdown(s);
    grpc_server_destroy(s->srv);
  }
  for (int q = 0; s->cqs && q < s->nthreads; q++)
    if (s->cqs[q]) grpc_completion_queue_destroy(s->cqs[q]);
  if (s->tls) grpc_server_credentials_release(s->tls);
  for (int m = 0; m < s->nmethods; m++) free(s->methods[m].path);
  free(s->cqs);
  free(s->threads);
  free(s->auth);
  bool inited = s->srv != NULL;
  free(s);
  if (inited) grpc_shutdown();
}
