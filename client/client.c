/*
 * client.c - the shardplan C client library (see shardplan_client.h): one gRPC channel per
 * sp_client, every method registered once at open, each call on its own pluck completion
 * queue (so threads can share a client), messages packed and unpacked with protobuf-c.
 *
 * Invariants: a call's metadata arrays, status details and byte buffers are released on every
 * path; the bearer token slice is created at open and shared by all calls (slices are
 * reference-counted). Memory: responses are protobuf-c messages unpacked with the default
 * allocator; the caller frees them with sp_client_free.
 */
#include "shardplan_client.h"

#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { M_PLAN, M_STREAM, M_GET, M_LIST, M_DELETE, M_PURGE, M_STATS, M_HEALTH, M_COUNT };

static const char *const method_paths[M_COUNT] = {
    [M_PLAN] = "/shardplan.v1.Planner/Plan",
    [M_STREAM] = "/shardplan.v1.Planner/PlanStream",
    [M_GET] = "/shardplan.v1.Planner/GetPlan",
    [M_LIST] = "/shardplan.v1.Planner/ListPlans",
    [M_DELETE] = "/shardplan.v1.Planner/DeletePlan",
    [M_PURGE] = "/shardplan.v1.Planner/Purge",
    [M_STATS] = "/shardplan.v1.Planner/GetStats",
    [M_HEALTH] = "/grpc.health.v1.Health/Check",
};

struct sp_client {
  grpc_channel *ch;
  char *target;
  bool has_token;
  grpc_slice auth_value;       /* "Bearer <token>" */
  void *methods[M_COUNT];
};

static int set_err(sp_client_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int set_err(sp_client_error *err, int code, const char *fmt, ...) {
  if (!err) return code;
  err->code = code;
  err->retry_after_ms = 0;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->message, sizeof err->message, fmt, ap);
  va_end(ap);
  return code;
}

static void clear_err(sp_client_error *err) {
  if (!err) return;
  err->code = SP_CLIENT_OK;
  err->message[0] = '\0';
  err->retry_after_ms = 0;
}

const char *sp_client_code_name(int code) {
  switch (code) {
    case SP_CLIENT_OK: return "ok";
    case SP_CLIENT_CANCELLED: return "cancelled";
    case SP_CLIENT_UNKNOWN: return "unknown error";
    case SP_CLIENT_INVALID_ARGUMENT: return "invalid argument";
    case SP_CLIENT_DEADLINE_EXCEEDED: return "deadline exceeded";
    case SP_CLIENT_NOT_FOUND: return "not found";
    case SP_CLIENT_ALREADY_EXISTS: return "already exists";
    case SP_CLIENT_PERMISSION_DENIED: return "permission denied";
    case SP_CLIENT_RESOURCE_EXHAUSTED: return "resource exhausted";
    case SP_CLIENT_FAILED_PRECONDITION: return "failed precondition";
    case SP_CLIENT_ABORTED: return "aborted";
    case SP_CLIENT_OUT_OF_RANGE: return "out of range";
    case SP_CLIENT_UNIMPLEMENTED: return "unimplemented";
    case SP_CLIENT_INTERNAL: return "internal error";
    case SP_CLIENT_UNAVAILABLE: return "unavailable";
    case SP_CLIENT_DATA_LOSS: return "data loss";
    case SP_CLIENT_UNAUTHENTICATED: return "unauthenticated";
    case SP_CLIENT_UNREACHABLE: return "unreachable";
    case SP_CLIENT_BAD_INPUT: return "bad input";
    case SP_CLIENT_NOMEM: return "out of memory";
    case SP_CLIENT_PROTOCOL: return "undecodable answer";
    default: return "unknown status";
  }
}

int sp_client_exit_code(int code) {
  switch (code) {
    case SP_CLIENT_OK: return 0;
    case SP_CLIENT_INVALID_ARGUMENT: case SP_CLIENT_RESOURCE_EXHAUSTED:
    case SP_CLIENT_OUT_OF_RANGE: case SP_CLIENT_FAILED_PRECONDITION: case SP_CLIENT_BAD_INPUT:
      return 3;
    case SP_CLIENT_NOT_FOUND: return 4;
    case SP_CLIENT_DEADLINE_EXCEEDED: return 5;
    case SP_CLIENT_UNAVAILABLE: return 6;
    case SP_CLIENT_UNREACHABLE: return 7;
    case SP_CLIENT_UNAUTHENTICATED: case SP_CLIENT_PERMISSION_DENIED: return 8;
    case SP_CLIENT_UNIMPLEMENTED: return 9;
    default: return 1;
  }
}

/* ---------------------------------------------------------------- open / close */

int sp_client_open(const sp_client_options *o, sp_client **out, sp_client_error *err) {
  sp_client_options none = {0};
  if (!o) o = &none;
  clear_err(err);
  if (!out) return set_err(err, SP_CLIENT_BAD_INPUT, "sp_client_open: no output");
  *out = NULL;
  const char *target = o->target;
  if (!target || !target[0]) target = getenv("SHARDPLAN_SERVER");
  if (!target || !target[0]) target = "127.0.0.1:50051";
  if (o->max_message_bytes < 0 || o->max_message_bytes > INT32_MAX)
    return set_err(err, SP_CLIENT_BAD_INPUT, "max_message_bytes must be in [0, 2^31)");
  if (o->token && strpbrk(o->token, "\r\n"))
    return set_err(err, SP_CLIENT_BAD_INPUT, "the token contains a line break");
  sp_client *c = calloc(1, sizeof *c);
  if (!c || !(c->target = strdup(target))) {
    free(c);
    return set_err(err, SP_CLIENT_NOMEM, "out of memory");
  }
  grpc_init();
  grpc_channel_credentials *creds =
      (o->tls_ca_pem || o->tls) ? grpc_ssl_credentials_create(o->tls_ca_pem, NULL, NULL, NULL)
                                : grpc_insecure_credentials_create();
  grpc_arg args[2];
  size_t nargs = 0;
  args[nargs].type = GRPC_ARG_INTEGER;
  args[nargs].key = (char *)GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH;
  args[nargs++].value.integer = o->max_message_bytes ? (int)o->max_message_bytes : 1 << 30;
  if (o->tls_server_name && o->tls_server_name[0]) {
    args[nargs].type = GRPC_ARG_STRING;
    args[nargs].key = (char *)GRPC_SSL_TARGET_NAME_OVERRIDE_ARG;
    args[nargs++].value.string = (char *)o->tls_server_name;
  }
  grpc_channel_args chargs = {.num_args = nargs, .args = args};
  c->ch = grpc_channel_create(c->target, creds, &chargs);
  grpc_channel_credentials_release(creds);
  if (!c->ch) {
    sp_client_close(c);
    return set_err(err, SP_CLIENT_BAD_INPUT, "cannot make a channel to \"%s\"", target);
  }
  for (int i = 0; i < M_COUNT; i++)
    c->methods[i] = grpc_channel_register_call(c->ch, method_paths[i], NULL, NULL);
  if (o->token && o->token[0]) {
    size_t n = strlen(o->token) + 8;
    char *v = malloc(n);
    if (!v) {
      sp_client_close(c);
      return set_err(err, SP_CLIENT_NOMEM, "out of memory");
    }
    snprintf(v, n, "Bearer %s", o->token);
    c->auth_value = grpc_slice_from_copied_string(v);
    c->has_token = true;
    free(v);
  }
  *out = c;
  return SP_CLIENT_OK;
}

void sp_client_close(sp_client *c) {
  if (!c) return;
  if (c->has_token) grpc_slice_unref(c->auth_value);
  if (c->ch) grpc_channel_destroy(c->ch);
  free(c->target);
  free(c);
  grpc_shutdown();
}

const char *sp_client_target(const sp_client *c) { return c->target; }

void sp_client_free(void *message) {
  if (message) protobuf_c_message_free_unpacked((ProtobufCMessage *)message, NULL);
}

/* ---------------------------------------------------------------- calls */

/* One call's state: its queue, the call, and what the status batch fills in. */
typedef struct call_ctx {
  grpc_completion_queue *cq;
  grpc_call *call;
  grpc_metadata_array initial_md, trailing_md;
  grpc_status_code status;
  grpc_slice details;
  const char *error_string;
  grpc_metadata auth;
} call_ctx;

static gpr_timespec deadline_of(int64_t timeout_ms) {
  if (timeout_ms <= 0) return gpr_inf_future(GPR_CLOCK_REALTIME);
  return gpr_time_add(gpr_now(GPR_CLOCK_REALTIME),
                      gpr_time_from_millis(timeout_ms, GPR_TIMESPAN));
}

static void call_begin(sp_client *c, int method, const char *path, int64_t timeout_ms,
                       call_ctx *x) {
  memset(x, 0, sizeof *x);
  x->cq = grpc_completion_queue_create_for_pluck(NULL);
  gpr_timespec dl = deadline_of(timeout_ms);
  if (method >= 0) {
    x->call = grpc_channel_create_registered_call(c->ch, NULL, GRPC_PROPAGATE_DEFAULTS, x->cq,
                                                  c->methods[method], dl, NULL);
  } else {
    grpc_slice m = grpc_slice_from_copied_string(path);
    x->call = grpc_channel_create_call(c->ch, NULL, GRPC_PROPAGATE_DEFAULTS, x->cq, m, NULL, dl,
                                       NULL);
    grpc_slice_unref(m);
  }
  grpc_metadata_array_init(&x->initial_md);
  grpc_metadata_array_init(&x->trailing_md);
  x->details = grpc_empty_slice();
  if (c->has_token) {
    x->auth.key = grpc_slice_from_static_string("authorization");
    x->auth.value = c->auth_value;
  }
}

static void call_end(call_ctx *x) {
  if (x->call) grpc_call_unref(x->call);
  grpc_metadata_array_destroy(&x->initial_md);
  grpc_metadata_array_destroy(&x->trailing_md);
  grpc_slice_unref(x->details);
  if (x->error_string) gpr_free((void *)x->error_string);
  if (x->cq) {
    grpc_completion_queue_shutdown(x->cq);
    while (grpc_completion_queue_pluck(x->cq, NULL, gpr_inf_future(GPR_CLOCK_REALTIME), NULL)
               .type != GRPC_QUEUE_SHUTDOWN) {
    }
    grpc_completion_queue_destroy(x->cq);
  }
}

/* Runs a batch and waits for it. false when gRPC refused it or it did not complete. */
static bool run_batch(call_ctx *x, grpc_op *ops, size_t n, void *tag) {
  if (grpc_call_start_batch(x->call, ops, n, tag, NULL) != GRPC_CALL_OK) return false;
  grpc_event ev = grpc_completion_queue_pluck(x->cq, tag, gpr_inf_future(GPR_CLOCK_REALTIME),
                                              NULL);
  return ev.type == GRPC_OP_COMPLETE && ev.success;
}

static void op_send_initial(grpc_op *op, call_ctx *x, sp_client *c) {
  op->op = GRPC_OP_SEND_INITIAL_METADATA;
  op->data.send_initial_metadata.count = c->has_token ? 1 : 0;
  op->data.send_initial_metadata.metadata = c->has_token ? &x->auth : NULL;
}

static void op_recv_status(grpc_op *op, call_ctx *x) {
  op->op = GRPC_OP_RECV_STATUS_ON_CLIENT;
  op->data.recv_status_on_client.trailing_metadata = &x->trailing_md;
  op->data.recv_status_on_client.status = &x->status;
  op->data.recv_status_on_client.status_details = &x->details;
  op->data.recv_status_on_client.error_string = &x->error_string;
}

/* Turns a finished call's status into the result (and err's message). */
static int call_result(sp_client *c, const char *path, call_ctx *x, sp_client_error *err) {
  if (x->status == GRPC_STATUS_OK) return SP_CLIENT_OK;
  int64_t retry = 0;
  for (size_t i = 0; i < x->trailing_md.count; i++)
    if (grpc_slice_str_cmp(x->trailing_md.metadata[i].key, "retry-after-ms") == 0) {
      char v[32];
      grpc_slice s = x->trailing_md.metadata[i].value;
      size_t n = GRPC_SLICE_LENGTH(s) < sizeof v - 1 ? GRPC_SLICE_LENGTH(s) : sizeof v - 1;
      memcpy(v, GRPC_SLICE_START_PTR(s), n);
      v[n] = '\0';
      retry = strtoll(v, NULL, 10);
    }
  char details[SP_CLIENT_MSG_MAX / 2];
  size_t n = GRPC_SLICE_LENGTH(x->details);
  if (n >= sizeof details) n = sizeof details - 1;
  memcpy(details, GRPC_SLICE_START_PTR(x->details), n);
  details[n] = '\0';
  if (!details[0] && x->error_string) snprintf(details, sizeof details, "%s", x->error_string);
  int code = (int)x->status;
  const char *method = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  if (code == SP_CLIENT_UNAVAILABLE && retry == 0 &&
      grpc_channel_check_connectivity_state(c->ch, 0) != GRPC_CHANNEL_READY) {
    set_err(err, SP_CLIENT_UNREACHABLE, "cannot reach shardpland at %s (is it running?): %s",
            c->target, details[0] ? details : "no connection");
    return SP_CLIENT_UNREACHABLE;
  }
  set_err(err, code, "%s: %s: %s", method, sp_client_code_name(code),
          details[0] ? details : "(no message)");
  if (err) err->retry_after_ms = retry;
  return code;
}

/* Reads a received byte buffer into malloc'd bytes (and destroys it). */
static int take_bytes(grpc_byte_buffer *bb, uint8_t **out, size_t *len, sp_client_error *err) {
  grpc_byte_buffer_reader r;
  *out = NULL;
  *len = 0;
  if (!grpc_byte_buffer_reader_init(&r, bb)) {
    grpc_byte_buffer_destroy(bb);
    return set_err(err, SP_CLIENT_PROTOCOL, "cannot read the server's answer");
  }
  grpc_slice s = grpc_byte_buffer_reader_readall(&r);
  size_t n = GRPC_SLICE_LENGTH(s);
  uint8_t *b = malloc(n ? n : 1);
  if (b) memcpy(b, GRPC_SLICE_START_PTR(s), n);
  grpc_slice_unref(s);
  grpc_byte_buffer_reader_destroy(&r);
  grpc_byte_buffer_destroy(bb);
  if (!b) return set_err(err, SP_CLIENT_NOMEM, "out of memory for a %zu-byte answer", n);
  *out = b;
  *len = n;
  return SP_CLIENT_OK;
}

static grpc_byte_buffer *make_buffer(const void *p, size_t n) {
  grpc_slice s = grpc_slice_from_copied_buffer((const char *)p, n);
  grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&s, 1);
  grpc_slice_unref(s);
  return bb;
}

/* Starts a call and fills the first four ops of every request (unary or streaming): initial
 * metadata, the one request message `send`, the close from the client, and the server's
 * initial metadata. Only ops[0..3] are cleared and set; later ops are the caller's. */
static void begin_request(sp_client *c, int method, const char *path, int64_t timeout_ms,
                          grpc_byte_buffer *send, call_ctx *x, grpc_op ops[4]) {
  call_begin(c, method, path, timeout_ms, x);
  memset(ops, 0, 4 * sizeof *ops);
  op_send_initial(&ops[0], x, c);
  ops[1].op = GRPC_OP_SEND_MESSAGE;
  ops[1].data.send_message.send_message = send;
  ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
  ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
  ops[3].data.recv_initial_metadata.recv_initial_metadata = &x->initial_md;
}

/* A unary call: method index (or -1 and a path), request bytes -> response bytes. */
static int unary_bytes(sp_client *c, int method, const char *path, const void *req,
                       size_t req_len, int64_t timeout_ms, uint8_t **resp, size_t *resp_len,
                       sp_client_error *err) {
  call_ctx x;
  grpc_op ops[6];
  grpc_byte_buffer *send = make_buffer(req, req_len), *recv = NULL;
  int rc = SP_CLIENT_OK;
  *resp = NULL;
  *resp_len = 0;
  memset(ops, 0, sizeof ops);
  begin_request(c, method, path, timeout_ms, send, &x, ops);
  ops[4].op = GRPC_OP_RECV_MESSAGE;
  ops[4].data.recv_message.recv_message = &recv;
  op_recv_status(&ops[5], &x);
  if (!x.call || !run_batch(&x, ops, 6, &x)) {
    rc = set_err(err, SP_CLIENT_INTERNAL, "%s: the call could not run", path);
    goto done;
  }
  rc = call_result(c, path, &x, err);
  if (rc == SP_CLIENT_OK) {
    if (!recv) rc = set_err(err, SP_CLIENT_PROTOCOL, "%s: the server sent no answer", path);
    else rc = take_bytes(recv, resp, resp_len, err);
    recv = NULL;
  }
done:
  if (recv) grpc_byte_buffer_destroy(recv);
  grpc_byte_buffer_destroy(send);
  call_end(&x);
  return rc;
}

/* Packs `req` into malloc'd bytes. */
static int pack(const ProtobufCMessage *req, uint8_t **out, size_t *len, sp_client_error *err) {
  *len = protobuf_c_message_get_packed_size(req);
  *out = malloc(*len ? *len : 1);
  if (!*out) return set_err(err, SP_CLIENT_NOMEM, "out of memory for a %zu-byte request", *len);
  protobuf_c_message_pack(req, *out);
  return SP_CLIENT_OK;
}

static int unpack(const ProtobufCMessageDescriptor *d, const uint8_t *b, size_t n,
                  ProtobufCMessage **out, sp_client_error *err) {
  *out = protobuf_c_message_unpack(d, NULL, n, b);
  if (!*out)
    return set_err(err, SP_CLIENT_PROTOCOL, "the server's answer is not a %s (%zu bytes)",
                   d->name, n);
  return SP_CLIENT_OK;
}

static int unary_msg(sp_client *c, int method, const ProtobufCMessage *req, int64_t timeout_ms,
                     const ProtobufCMessageDescriptor *resp_desc, ProtobufCMessage **out,
                     sp_client_error *err) {
  uint8_t *req_b = NULL, *resp_b = NULL;
  size_t req_n, resp_n;
  clear_err(err);
  *out = NULL;
  int rc = pack(req, &req_b, &req_n, err);
  if (rc == SP_CLIENT_OK)
    rc = unary_bytes(c, method, method_paths[method], req_b, req_n, timeout_ms, &resp_b,
                     &resp_n, err);
  if (rc == SP_CLIENT_OK) rc = unpack(resp_desc, resp_b, resp_n, out, err);
  free(req_b);
  free(resp_b);
  return rc;
}

int sp_client_call_raw(sp_client *c, const char *method, const void *req, size_t req_len,
                       int64_t timeout_ms, uint8_t **resp, size_t *resp_len,
                       sp_client_error *err) {
  clear_err(err);
  if (!method || method[0] != '/')
    return set_err(err, SP_CLIENT_BAD_INPUT, "a method path starts with '/'");
  return unary_bytes(c, -1, method, req, req_len, timeout_ms, resp, resp_len, err);
}

int sp_client_plan(sp_client *c, const Shardplan__V1__PlanRequest *req, int64_t timeout_ms,
                   Shardplan__V1__PlanResponse **out, sp_client_error *err) {
  return unary_msg(c, M_PLAN, &req->base, timeout_ms, &shardplan__v1__plan_response__descriptor,
                   (ProtobufCMessage **)out, err);
}

int sp_client_plan_stream(sp_client *c, const Shardplan__V1__PlanRequest *req,
                          int64_t timeout_ms, sp_client_progress_fn progress, void *user,
                          Shardplan__V1__PlanResponse **out, sp_client_error *err) {
  call_ctx x;
  grpc_op ops[4];
  uint8_t *req_b = NULL;
  size_t req_n;
  grpc_byte_buffer *send = NULL;
  Shardplan__V1__PlanResponse *plan = NULL;
  clear_err(err);
  *out = NULL;
  int rc = pack(&req->base, &req_b, &req_n, err);
  if (rc != SP_CLIENT_OK) return rc;
  send = make_buffer(req_b, req_n);
  free(req_b);
  begin_request(c, M_STREAM, method_paths[M_STREAM], timeout_ms, send, &x, ops);
  bool sent = x.call && run_batch(&x, ops, 4, (void *)1);
  /* Messages until the stream ends (also when sending failed: the status says why). */
  while (sent && rc == SP_CLIENT_OK) {
    grpc_byte_buffer *recv = NULL;
    memset(ops, 0, sizeof ops);
    ops[0].op = GRPC_OP_RECV_MESSAGE;
    ops[0].data.recv_message.recv_message = &recv;
    if (!run_batch(&x, ops, 1, (void *)2) || !recv) {
      if (recv) grpc_byte_buffer_destroy(recv);
      break;
    }
    uint8_t *b;
    size_t n;
    ProtobufCMessage *m = NULL;
    rc = take_bytes(recv, &b, &n, err);
    if (rc != SP_CLIENT_OK) break;
    rc = unpack(&shardplan__v1__plan_event__descriptor, b, n, &m, err);
    free(b);
    if (rc != SP_CLIENT_OK) break;
    Shardplan__V1__PlanEvent *ev = (Shardplan__V1__PlanEvent *)m;
    if (ev->event_case == SHARDPLAN__V1__PLAN_EVENT__EVENT_PROGRESS && progress) {
      progress(ev->progress, user);
    } else if (ev->event_case == SHARDPLAN__V1__PLAN_EVENT__EVENT_PLAN) {
      sp_client_free(plan);
      plan = ev->plan;   /* sub-messages are allocated one by one: detach and keep it */
      ev->plan = NULL;
      ev->event_case = SHARDPLAN__V1__PLAN_EVENT__EVENT__NOT_SET;
    }
    sp_client_free(ev);
  }
  int rc_read = rc;
  if (x.call) {
    memset(ops, 0, sizeof ops);
    op_recv_status(&ops[0], &x);
    if (!run_batch(&x, ops, 1, (void *)3)) {
      rc = set_err(err, SP_CLIENT_INTERNAL, "PlanStream: the call could not finish");
      goto done;
    }
    rc = call_result(c, method_paths[M_STREAM], &x, err);
  } else {
    rc = set_err(err, SP_CLIENT_INTERNAL, "PlanStream: the call could not start");
  }
  if (rc == SP_CLIENT_OK) rc = rc_read;
  if (rc == SP_CLIENT_OK && !plan)
    rc = set_err(err, SP_CLIENT_PROTOCOL, "PlanStream: the stream ended without a plan");
done:
  grpc_byte_buffer_destroy(send);
  call_end(&x);
  if (rc == SP_CLIENT_OK) *out = plan;
  else sp_client_free(plan);
  return rc;
}

int sp_client_get_plan(sp_client *c, const char *key, Shardplan__V1__Detail detail,
                       int64_t timeout_ms, Shardplan__V1__PlanResponse **out,
                       sp_client_error *err) {
  Shardplan__V1__GetPlanRequest req = SHARDPLAN__V1__GET_PLAN_REQUEST__INIT;
  req.key = (char *)(key ? key : "");
  req.detail = detail;
  return unary_msg(c, M_GET, &req.base, timeout_ms, &shardplan__v1__plan_response__descriptor,
                   (ProtobufCMessage **)out, err);
}

int sp_client_list_plans(sp_client *c, int32_t page_size, const char *page_token,
                         int64_t timeout_ms, Shardplan__V1__ListPlansResponse **out,
                         sp_client_error *err) {
  Shardplan__V1__ListPlansRequest req = SHARDPLAN__V1__LIST_PLANS_REQUEST__INIT;
  req.page_size = page_size;
  req.page_token = (char *)(page_token ? page_token : "");
  return unary_msg(c, M_LIST, &req.base, timeout_ms,
                   &shardplan__v1__list_plans_response__descriptor, (ProtobufCMessage **)out,
                   err);
}

int sp_client_delete_plan(sp_client *c, const char *key, int64_t timeout_ms, bool *deleted,
                          sp_client_error *err) {
  Shardplan__V1__DeletePlanRequest req = SHARDPLAN__V1__DELETE_PLAN_REQUEST__INIT;
  Shardplan__V1__DeletePlanResponse *resp = NULL;
  req.key = (char *)(key ? key : "");
  int rc = unary_msg(c, M_DELETE, &req.base, timeout_ms,
                     &shardplan__v1__delete_plan_response__descriptor,
                     (ProtobufCMessage **)&resp, err);
  if (deleted) *deleted = rc == SP_CLIENT_OK && resp->deleted;
  sp_client_free(resp);
  return rc;
}

int sp_client_purge(sp_client *c, bool older_than_version, bool all, int64_t timeout_ms,
                    int64_t *deleted, sp_client_error *err) {
  Shardplan__V1__PurgeRequest req = SHARDPLAN__V1__PURGE_REQUEST__INIT;
  Shardplan__V1__PurgeResponse *resp = NULL;
  req.older_than_version = older_than_version;
  req.all = all;
  int rc = unary_msg(c, M_PURGE, &req.base, timeout_ms,
                     &shardplan__v1__purge_response__descriptor, (ProtobufCMessage **)&resp,
                     err);
  if (deleted) *deleted = rc == SP_CLIENT_OK ? resp->deleted : 0;
  sp_client_free(resp);
  return rc;
}

int sp_client_get_stats(sp_client *c, int64_t timeout_ms, Shardplan__V1__Stats **out,
                        sp_client_error *err) {
  Shardplan__V1__GetStatsRequest req = SHARDPLAN__V1__GET_STATS_REQUEST__INIT;
  return unary_msg(c, M_STATS, &req.base, timeout_ms, &shardplan__v1__stats__descriptor,
                   (ProtobufCMessage **)out, err);
}

int sp_client_health(sp_client *c, const char *service, int64_t timeout_ms, int *status,
                     sp_client_error *err) {
  Grpc__Health__V1__HealthCheckRequest req = GRPC__HEALTH__V1__HEALTH_CHECK_REQUEST__INIT;
  Grpc__Health__V1__HealthCheckResponse *resp = NULL;
  req.service = (char *)(service ? service : "");
  int rc = unary_msg(c, M_HEALTH, &req.base, timeout_ms,
                     &grpc__health__v1__health_check_response__descriptor,
                     (ProtobufCMessage **)&resp, err);
  if (status) *status = rc == SP_CLIENT_OK ? (int)resp->status : 0;
  sp_client_free(resp);
  return rc;
}
