/*
 * daemon_config.c - flags and SHARDPLAN_* variables of shardpland (see daemon_config.h).
 * Environment first, then argv on top; files (TLS, token) are read once validation passed.
 */
#include "daemon/daemon_config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ir/file_read.h"

enum {
  OPT_GRPC = 1000, OPT_HTTP, OPT_DATA, OPT_MAXS, OPT_MAXQ, OPT_CACHE, OPT_MSG, OPT_REQMEM, OPT_TIME,
  OPT_LOG, OPT_CERT, OPT_KEY, OPT_TOKEN, OPT_ALLOW, OPT_VERSION, OPT_HELP
};

typedef struct flag {
  const char *name;
  const char *env;
  int id;
  bool has_arg;
} flag;

static const flag FLAGS[] = {
    {"grpc-listen", "SHARDPLAN_GRPC_LISTEN", OPT_GRPC, true},
    {"http-listen", "SHARDPLAN_HTTP_LISTEN", OPT_HTTP, true},
    {"http-allow-host", "SHARDPLAN_HTTP_ALLOW_HOST", OPT_ALLOW, true},
    {"data-dir", "SHARDPLAN_DATA_DIR", OPT_DATA, true},
    {"max-searches", "SHARDPLAN_MAX_SEARCHES", OPT_MAXS, true},
    {"max-queue", "SHARDPLAN_MAX_QUEUE", OPT_MAXQ, true},
    {"cache-max-mb", "SHARDPLAN_CACHE_MAX_MB", OPT_CACHE, true},
    {"max-message-mb", "SHARDPLAN_MAX_MESSAGE_MB", OPT_MSG, true},
    {"max-request-memory-mb", "SHARDPLAN_MAX_REQUEST_MEMORY_MB", OPT_REQMEM, true},
    {"time-limit", "SHARDPLAN_TIME_LIMIT", OPT_TIME, true},
    {"log-level", "SHARDPLAN_LOG_LEVEL", OPT_LOG, true},
    {"tls-cert", "SHARDPLAN_TLS_CERT", OPT_CERT, true},
    {"tls-key", "SHARDPLAN_TLS_KEY", OPT_KEY, true},
    {"token-file", "SHARDPLAN_TOKEN_FILE", OPT_TOKEN, true},
    {"version", NULL, OPT_VERSION, false},
    {"help", NULL, OPT_HELP, false},
};
#define NFLAGS (int)(sizeof FLAGS / sizeof FLAGS[0])

void sp_daemon_config_usage(FILE *out) {
  fputs(
      "usage: shardpland [flags]\n"
      "The shardplan daemon: plans over gRPC (shardplan.v1.Planner, grpc.health.v1.Health),\n"
      "plan cache in SQLite. Each flag can also be set by the environment variable shown.\n\n"
      "  --grpc-listen ADDR    SHARDPLAN_GRPC_LISTEN   default 127.0.0.1:50051; port 0 picks a\n"
      "                                               free port; unix:PATH for a socket\n"
      "  --http-listen H:P     SHARDPLAN_HTTP_LISTEN   dashboard, default 127.0.0.1:8080; off\n"
      "  --http-allow-host N   SHARDPLAN_HTTP_ALLOW_HOST  host names the dashboard answers to\n"
      "                                               besides loopback (comma separated)\n"
      "  --data-dir DIR        SHARDPLAN_DATA_DIR      default $XDG_STATE_HOME/shardplan or\n"
      "                                               ~/.local/state/shardplan\n"
      "  --max-searches N      SHARDPLAN_MAX_SEARCHES  searches at once, default: cores\n"
      "  --max-queue N         SHARDPLAN_MAX_QUEUE     searches waiting, default 64; beyond:\n"
      "                                               UNAVAILABLE with a retry hint\n"
      "  --cache-max-mb N      SHARDPLAN_CACHE_MAX_MB  plan cache size bound, default 1024\n"
      "  --max-message-mb N    SHARDPLAN_MAX_MESSAGE_MB request size bound, default 64\n"
      "  --max-request-memory-mb N  SHARDPLAN_MAX_REQUEST_MEMORY_MB  refuse (RESOURCE_EXHAUSTED)\n"
      "                        a Plan whose estimated memory is larger; default: half the\n"
      "                        machine's memory / --max-searches\n"
      "  --time-limit S        SHARDPLAN_TIME_LIMIT    search seconds when a request sets\n"
      "                                               none; default none: bounded by work\n"
      "  --log-level L         SHARDPLAN_LOG_LEVEL     error, warn, info (default), debug\n"
      "  --tls-cert FILE       SHARDPLAN_TLS_CERT      PEM certificate (with --tls-key): TLS\n"
      "  --tls-key FILE        SHARDPLAN_TLS_KEY       PEM private key\n"
      "  --token-file FILE     SHARDPLAN_TOKEN_FILE    require 'authorization: Bearer TOKEN'\n"
      "                                               on every method but Health\n"
      "  --version, --help\n",
      out);
}

static int set_str(char **dst, const char *v, sp_err *err) {
  free(*dst);
  *dst = strdup(v);
  return *dst ? SP_OK : sp_err_set(err, SP_ENOMEM, "out of memory");
}

static int parse_int(const char *what, const char *v, int64_t lo, int64_t hi, int64_t *out,
                     sp_err *err) {
  char *end;
  errno = 0;
  long long x = strtoll(v, &end, 10);
  if (errno || end == v || *end || x < lo || x > hi)
    return sp_err_set(err, SP_EINVAL, "%s: expected an integer from %lld to %lld, got \"%s\"",
                      what, (long long)lo, (long long)hi, v);
  *out = x;
  return SP_OK;
}

static int apply(sp_daemon_config *c, const flag *f, const char *what, const char *v,
                 sp_err *err) {
  int64_t x;
  int rc;
  switch (f->id) {
    case OPT_GRPC:
      if (!*v) return sp_err_set(err, SP_EINVAL, "%s: empty address", what);
      return set_str(&c->grpc_listen, v, err);
    case OPT_HTTP:
      if (!*v || strcmp(v, "off") == 0) {
        free(c->http_listen);
        c->http_listen = NULL;
        return SP_OK;
      }
      if (!strchr(v, ':'))
        return sp_err_set(err, SP_EINVAL, "%s: expected HOST:PORT, got \"%s\"", what, v);
      return set_str(&c->http_listen, v, err);
    case OPT_ALLOW: return set_str(&c->http_allow_hosts, v, err);
    case OPT_DATA: return set_str(&c->data_dir, v, err);
    case OPT_MAXS:
      if ((rc = parse_int(what, v, 1, 1024, &x, err))) return rc;
      c->max_searches = (int)x;
      return SP_OK;
    case OPT_MAXQ:
      if ((rc = parse_int(what, v, 0, 1000000, &x, err))) return rc;
      c->max_queue = (int)x;
      return SP_OK;
    case OPT_CACHE:
      if ((rc = parse_int(what, v, 0, 1 << 22, &x, err))) return rc;
      c->cache_max_bytes = x << 20;
      return SP_OK;
    case OPT_MSG:
      if ((rc = parse_int(what, v, 1, 2047, &x, err))) return rc;
      c->max_message_bytes = x << 20;
      return SP_OK;
    case OPT_REQMEM:
      if ((rc = parse_int(what, v, 16, 1 << 24, &x, err))) return rc;
      c->max_request_memory_bytes = x << 20;
      return SP_OK;
    case OPT_TIME: {
      char *end;
      errno = 0;
      double t = strtod(v, &end);
      if (errno || end == v || *end || !(t > 0) || t > 86400)
        return sp_err_set(err, SP_EINVAL, "%s: expected seconds in (0, 86400], got \"%s\"",
                          what, v);
      c->time_limit = t;
      return SP_OK;
    }
    case OPT_LOG: {
      static const char *const names[] = {"error", "warn", "info", "debug"};
      for (int i = 0; i < 4; i++)
        if (strcmp(v, names[i]) == 0) {
          c->log_level = (sp_log_level)i;
          return SP_OK;
        }
      return sp_err_set(err, SP_EINVAL, "%s: expected error, warn, info or debug, got \"%s\"",
                        what, v);
    }
    case OPT_CERT: return set_str(&c->tls_cert_path, v, err);
    case OPT_KEY: return set_str(&c->tls_key_path, v, err);
    case OPT_TOKEN: return set_str(&c->token_path, v, err);
    case OPT_VERSION: c->show_version = true; return SP_OK;
    case OPT_HELP: c->show_help = true; return SP_OK;
  }
  return SP_OK;
}

static int read_file(const char *what, const char *path, size_t max, char **out, sp_err *err) {
  FILE *f = fopen(path, "rb");
  if (!f) return sp_err_set(err, SP_EIO, "%s: cannot open %s: %s", what, path, strerror(errno));
  int rc = sp_file_read_stream(f, max, out, NULL);
  fclose(f);
  if (rc == SP_ENOMEM) return sp_err_set(err, SP_ENOMEM, "out of memory");
  if (rc)
    return sp_err_set(err, SP_EIO, "%s: cannot read %s (unreadable or over %zu bytes)", what,
                      path, max);
  return SP_OK;
}

bool sp_daemon_addr_is_local(const char *a) {
  if (strncmp(a, "unix:", 5) == 0) return true;
  if (strncmp(a, "ipv4:", 5) == 0) a += 5;
  else if (strncmp(a, "ipv6:", 5) == 0) a += 5;
  return strncmp(a, "127.", 4) == 0 || strncmp(a, "localhost:", 10) == 0 ||
         strncmp(a, "[::1]:", 6) == 0;
}

int sp_daemon_config_parse(int argc, char **argv, sp_getenv_fn env, sp_daemon_config *c,
                           sp_err *err) {
  memset(c, 0, sizeof *c);
  int rc;
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  c->max_searches = cores > 0 ? (int)cores : 1;
  c->max_queue = 64;
  c->cache_max_bytes = 1024LL << 20;
  c->max_message_bytes = 64LL << 20;
  c->time_limit = 0;   /* none: the search is bounded by work, cut only by deadlines */
  c->log_level = SP_LOG_INFO;
  if ((rc = set_str(&c->grpc_listen, "127.0.0.1:50051", err)) ||
      (rc = set_str(&c->http_listen, "127.0.0.1:8080", err)))
    goto fail;
  if (!env) env = (sp_getenv_fn)getenv;
  for (int i = 0; i < NFLAGS; i++) {
    const char *v = FLAGS[i].env ? env(FLAGS[i].env) : NULL;
    if (v && (rc = apply(c, &FLAGS[i], FLAGS[i].env, v, err))) goto fail;
  }
  struct option longopts[NFLAGS + 1];
  for (int i = 0; i < NFLAGS; i++)
    longopts[i] = (struct option){FLAGS[i].name, FLAGS[i].has_arg ? required_argument
                                                                  : no_argument, NULL,
                                  FLAGS[i].id};
  longopts[NFLAGS] = (struct option){0, 0, 0, 0};
  optind = 1;
  opterr = 0;
  int ch;
  while ((ch = getopt_long(argc, argv, "hV", longopts, NULL)) != -1) {
    if (ch == 'h') ch = OPT_HELP;
    if (ch == 'V') ch = OPT_VERSION;
    const flag *f = NULL;
    for (int i = 0; i < NFLAGS; i++)
      if (FLAGS[i].id == ch) f = &FLAGS[i];
    if (!f) {
      const char *bad = argv[optind - 1] ? argv[optind - 1] : "?";
      rc = sp_err_set(err, SP_EINVAL, ch == ':' || (ch == '?' && optopt)
                                          ? "flag %s needs a value (see --help)"
                                          : "unknown flag %s (see --help)", bad);
      goto fail;
    }
    char what[64];
    snprintf(what, sizeof what, "--%s", f->name);
    if ((rc = apply(c, f, what, optarg ? optarg : "", err))) goto fail;
  }
  if (optind < argc) {
    rc = sp_err_set(err, SP_EINVAL, "unexpected argument \"%s\" (see --help)", argv[optind]);
    goto fail;
  }
  if (c->show_help || c->show_version) return SP_OK;
  if (!c->max_request_memory_bytes) { /* half the machine's memory, shared by the searches */
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    int64_t total = pages > 0 && page > 0 ? (int64_t)pages * page : (int64_t)4 << 30;
    c->max_request_memory_bytes = total / 2 / (c->max_searches > 0 ? c->max_searches : 1);
  }
  if (!c->data_dir) {
    const char *xdg = env("XDG_STATE_HOME"), *home = env("HOME");
    char buf[4096];
    if (xdg && *xdg) snprintf(buf, sizeof buf, "%s/shardplan", xdg);
    else if (home && *home) snprintf(buf, sizeof buf, "%s/.local/state/shardplan", home);
    else snprintf(buf, sizeof buf, "./shardplan-state");
    if ((rc = set_str(&c->data_dir, buf, err))) goto fail;
  }
  if (!c->tls_cert_path != !c->tls_key_path) {
    rc = sp_err_set(err, SP_EINVAL, "--tls-cert and --tls-key go together (one is missing)");
    goto fail;
  }
  if (c->tls_cert_path &&
      ((rc = read_file("--tls-cert", c->tls_cert_path, 1 << 20, &c->tls_cert_pem, err)) ||
       (rc = read_file("--tls-key", c->tls_key_path, 1 << 20, &c->tls_key_pem, err))))
    goto fail;
  if (c->token_path) {
    if ((rc = read_file("--token-file", c->token_path, 4096, &c->token, err))) goto fail;
    size_t n = strlen(c->token);
    while (n && (c->token[n - 1] == '\n' || c->token[n - 1] == '\r' || c->token[n - 1] == ' '))
      c->token[--n] = '\0';
    if (n == 0) {
      rc = sp_err_set(err, SP_EINVAL, "--token-file: %s holds no token", c->token_path);
      goto fail;
    }
    if (!c->tls_cert_path && !sp_daemon_addr_is_local(c->grpc_listen)) {
      rc = sp_err_set(err, SP_EINVAL, "--token-file: a bearer token is accepted only over "
                      "loopback or TLS, and %s is neither (add --tls-cert/--tls-key)",
                      c->grpc_listen);
      goto fail;
    }
  }
  return SP_OK;
fail:
  sp_daemon_config_free(c);
  return rc;
}

void sp_daemon_config_free(sp_daemon_config *c) {
  free(c->grpc_listen);
  free(c->http_listen);
  free(c->http_allow_hosts);
  free(c->data_dir);
  free(c->tls_cert_pem);
  free(c->tls_key_pem);
  free(c->tls_cert_path);
  free(c->tls_key_path);
  free(c->token);
  free(c->token_path);
  memset(c, 0, sizeof *c);
}
