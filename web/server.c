/*
 * server.c - libmicrohttpd glue: turns each HTTP request into an sp_web_request, calls the
 * router (sp_web_handle) and sends its response with the security headers every page gets.
 *
 * A POST body is gathered over the upload callbacks into the connection's context (at most
 * SP_WEB_MAX_BODY bytes; more is answered 413). Connections are served by a small pool of
 * libmicrohttpd threads with an idle timeout and a connection limit.
 */
#include <microhttpd.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "web/web_int.h"

typedef struct conn_ctx {
  char body[SP_WEB_MAX_BODY + 1];
  size_t len;
  bool too_large;
} conn_ctx;

static enum MHD_Result collect_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                   const char *value) {
  (void)kind;
  sp_web_request *req = cls;
  if (req->nargs < SP_WEB_MAX_ARGS && key) {
    req->args[req->nargs].key = key;
    req->args[req->nargs].value = value ? value : "";
    req->nargs++;
  }
  return MHD_YES;
}

static const char *header(struct MHD_Connection *c, const char *name) {
  return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
}

static enum MHD_Result send_response(struct MHD_Connection *c, sp_web_response *r) {
  size_t len = r->body.len;
  char *buf = sp_strbuf_detach(&r->body);
  if (!buf) { /* empty or out of memory */
    buf = strdup("");
    len = 0;
    if (!buf) return MHD_NO;
  }
  struct MHD_Response *resp = MHD_create_response_from_buffer(len, buf, MHD_RESPMEM_MUST_FREE);
  if (!resp) {
    free(buf);
    return MHD_NO;
  }
  MHD_add_response_header(resp, "Content-Type", r->content_type);
  MHD_add_response_header(resp, "Content-Security-Policy",
                          "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; "
                          "form-action 'self'; base-uri 'none'");
  MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
  MHD_add_response_header(resp, "X-Frame-Options", "DENY");
  MHD_add_response_header(resp, "Referrer-Policy", "same-origin");
  MHD_add_response_header(resp, "Cache-Control", "no-store");
  if (r->set_cookie) MHD_add_response_header(resp, "Set-Cookie", r->set_cookie);
  if (r->location) MHD_add_response_header(resp, "Location", r->location);
  char retry[16];
  snprintf(retry, sizeof retry, "%d", r->retry_after_s);
  if (r->retry_after_s > 0) MHD_add_response_header(resp, "Retry-After", retry);
  enum MHD_Result ok = MHD_queue_response(c, (unsigned)r->status, resp);
  MHD_destroy_response(resp);
  return ok;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **req_cls) {
  (void)version;
  sp_web *w = cls;
  conn_ctx *ctx = *req_cls;
  if (!ctx) { /* first call: only the headers have arrived */
    ctx = calloc(1, sizeof *ctx);
    if (!ctx) return MHD_NO;
    *req_cls = ctx;
    return MHD_YES;
  }
  if (*upload_data_size) {
    size_t n = *upload_data_size;
    if (ctx->len + n > SP_WEB_MAX_BODY) ctx->too_large = true;
    else memcpy(ctx->body + ctx->len, upload_data, n), ctx->len += n;
    *upload_data_size = 0;
    return MHD_YES;
  }

  sp_web_request req;
  memset(&req, 0, sizeof req);
  req.method = method;
  req.path = url;
  req.host = header(c, MHD_HTTP_HEADER_HOST);
  req.origin = header(c, "Origin");
  req.referer = header(c, MHD_HTTP_HEADER_REFERER);
  req.cookie = header(c, MHD_HTTP_HEADER_COOKIE);
  req.authorization = header(c, MHD_HTTP_HEADER_AUTHORIZATION);
  MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, collect_arg, &req);
  const char *ctype = header(c, MHD_HTTP_HEADER_CONTENT_TYPE);
  if (ctype && strncmp(ctype, "application/x-www-form-urlencoded", 33) == 0) {
    ctx->body[ctx->len] = '\0';
    req.nform = sp_web_parse_form(ctx->body, req.form, SP_WEB_MAX_ARGS);
  }

  sp_web_response resp;
  sp_web_response_init(&resp);
  if (ctx->too_large) sp__web_error(&resp, 413, "Request body too large",
                                    "A form is at most 16 KiB.");
  else sp_web_handle(w, &req, &resp);
  sp_metrics_http(w->metrics, method, resp.status);
  enum MHD_Result ok = send_response(c, &resp);
  sp_web_response_free(&resp);
  return ok;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **req_cls,
                         enum MHD_RequestTerminationCode toe) {
  (void)cls, (void)c, (void)toe;
  free(*req_cls);
  *req_cls = NULL;
}

/* Splits "HOST:PORT" / "[V6]:PORT" into host and port text. */
static int split_listen(const char *listen, char *host, size_t hcap, char *port, size_t pcap,
                        sp_err *err) {
  const char *colon;
  const char *h = listen;
  size_t hl;
  if (listen[0] == '[') {
    const char *close = strchr(listen, ']');
    if (!close || close[1] != ':') goto bad;
    h = listen + 1;
    hl = (size_t)(close - h);
    colon = close + 1;
  } else {
    colon = strrchr(listen, ':');
    if (!colon) goto bad;
    hl = (size_t)(colon - listen);
  }
  if (hl >= hcap || strlen(colon + 1) >= pcap || !colon[1]) goto bad;
  memcpy(host, h, hl);
  host[hl] = '\0';
  snprintf(port, pcap, "%s", colon + 1);
  for (const char *p = port; *p; p++)
    if (*p < '0' || *p > '9') goto bad;
  if (atol(port) > 65535) goto bad;
  return SP_OK;
bad:
  return sp_err_set(err, SP_EINVAL,
                    "--http-listen: '%s' is not HOST:PORT (e.g. 127.0.0.1:8080, [::1]:0)", listen);
}

int sp__web_split_listen(const char *listen, char *host, size_t hcap, char *port, size_t pcap,
                         sp_err *err) {
  return split_listen(listen, host, hcap, port, pcap, err);
}

int sp_web_listen(sp_web *w, sp_err *err) {
  char host[256], port[16];
  int rc = split_listen(w->listen, host, sizeof host, port, sizeof port, err);
  if (rc) return rc;
  struct addrinfo hints, *ai = NULL;
  memset(&hints, 0, sizeof hints);
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  int gai = getaddrinfo(host[0] ? host : NULL, port, &hints, &ai);
  if (gai != 0 || !ai)
    return sp_err_set(err, SP_EINVAL, "--http-listen: cannot resolve '%s': %s", host,
                      gai_strerror(gai));
  unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD;
  if (ai->ai_family == AF_INET6) flags |= MHD_USE_IPv6;
  w->daemon = MHD_start_daemon(
      flags, 0, NULL, NULL, on_request, w, MHD_OPTION_SOCK_ADDR, ai->ai_addr,
      MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL, MHD_OPTION_CONNECTION_TIMEOUT,
      (unsigned int)w->timeout_s, MHD_OPTION_CONNECTION_LIMIT, (unsigned int)w->max_connections,
      MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)w->threads, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
      (size_t)(64 * 1024), MHD_OPTION_END);
  freeaddrinfo(ai);
  if (!w->daemon)
    return sp_err_set(err, SP_EIO, "dashboard: cannot listen on %s (address in use or not "
                      "available)", w->listen);
  const union MHD_DaemonInfo *info = MHD_get_daemon_info(w->daemon, MHD_DAEMON_INFO_BIND_PORT);
  w->port = info ? info->port : 0;
  bool v6 = strchr(host, ':') != NULL;
  snprintf(w->address, sizeof w->address, v6 ? "[%s]:%d" : "%s:%d", host[0] ? host : "0.0.0.0",
           w->port);
  return SP_OK;
}

void sp__web_stop_daemon(sp_web *w) {
  if (w->daemon) MHD_stop_daemon(w->daemon);
  w->daemon = NULL;
}
