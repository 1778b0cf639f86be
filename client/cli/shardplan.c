/*
 * shardplan.c - the `shardplan` command: talks to a running shardpland through the C client
 * library (client/shardplan_client.h). Commands: plan, get, list, delete, stats, purge,
 * export, health. Options are read with getopt_long (anywhere on the line); each failure kind
 * has its own exit code (the table in --help, from sp_client_exit_code).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli_mesh.h"
#include "cli_print.h"
#include "ir/err.h"
#include "ir/file_read.h"
#include "shardplan_client.h"

#ifndef SP_VERSION
#define SP_VERSION "0"
#endif

#define EXIT_USAGE 2
#define DEFAULT_CLUSTER "one_machine_8gpu"

static const char usage_text[] =
    "usage: shardplan [OPTIONS] COMMAND [ARGS]\n"
    "\n"
    "Talks to a running shardplan daemon (shardpland).\n"
    "\n"
    "Commands:\n"
    "  plan FILE       plan an MLIR module (StableHLO + sdy; FILE - reads standard input);\n"
    "                  prints the key, `cache: hit` or `cache: miss`, the status and a\n"
    "                  summary. Without a cluster: propagation only; with --cluster or\n"
    "                  --search: propagation and the cost search\n"
    "  get KEY         a stored plan, printed as by plan\n"
    "  list            the stored plans\n"
    "  delete KEY      delete a stored plan\n"
    "  stats           cache and search statistics\n"
    "  purge           drop stored plans: --older-than-version (of an earlier planner) or --all\n"
    "  export KEY      the plan in another form: --format sdy|jax|gspmd|json\n"
    "  health          the daemon's health check (exit 0 when serving)\n"
    "\n"
    "Options:\n"
    "  --server ADDR        daemon address: HOST:PORT or unix:PATH (default $SHARDPLAN_SERVER,\n"
    "                       else 127.0.0.1:50051)\n"
    "  --token-file F       bearer token file (default $SHARDPLAN_TOKEN_FILE)\n"
    "  --tls-ca F           use TLS, trusting the certificates in F (PEM)\n"
    "  --tls-server-name N  the name the server's certificate carries\n"
    "  --timeout S          give up after S seconds (default: 10; plan: the time limit + 60)\n"
    "  --cluster FILE|NAME  plan: a cluster file (docs/cluster-format.md) or a bundled example\n"
    "                       (one_machine_8gpu, four_machines_32gpu, eight_machines_64gpu)\n"
    "  --mesh SPEC          plan: for a module without an sdy.mesh: data=4,model=2 adds that\n"
    "                       mesh; data,model adds those axes and searches their sizes\n"
    "  --search             plan: search even without --cluster (on " DEFAULT_CLUSTER ")\n"
    "  --time-limit S       plan: the search's time limit in seconds (default: the server's)\n"
    "  --gap G              plan: stop the search at this relative gap (0.01 = 1%)\n"
    "  --full               plan, get: ask for the full plan (module text, factor tables)\n"
    "  --no-progress        plan: no progress bar (it is drawn only on a terminal)\n"
    "  --format F           export: sdy, jax, gspmd or json\n"
    "  --page-size N        list: plans per request (default 100)\n"
    "  --older-than-version purge: plans of an earlier planner version\n"
    "  --all                purge: every plan\n"
    "  --version, --help\n"
    "\n"
    "Exit codes:\n"
    "  0  success\n"
    "  1  internal error (the server failed, or its answer does not decode)\n"
    "  2  usage (bad command line)\n"
    "  3  bad input (the module, cluster or options were refused, the request is too large,\n"
    "     or an input file cannot be read)\n"
    "  4  not found (no plan with that key)\n"
    "  5  deadline exceeded (no valid plan by the deadline)\n"
    "  6  unavailable (the daemon is busy or shutting down: retry later; health: not serving)\n"
    "  7  unreachable (no connection to the daemon)\n"
    "  8  auth (missing or wrong token)\n"
    "  9  unimplemented (the daemon does not know the method)\n";

typedef struct cli {
  const char *server, *token_file, *tls_ca, *tls_name, *cluster, *mesh, *format;
  double timeout, time_limit, gap;
  bool search, full, no_progress, older, all;
  int page_size;
  sp_client *client;
} cli;

static int usage_error(const char *fmt, const char *arg) {
  fprintf(stderr, "shardplan: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n(see shardplan --help)\n");
  return EXIT_USAGE;
}

/* Prints the failure and returns its exit code. */
static int fail(const sp_client_error *e) {
  fprintf(stderr, "shardplan: %s\n", e->message);
  if (e->code == SP_CLIENT_UNAVAILABLE && e->retry_after_ms > 0)
    fprintf(stderr, "shardplan: the daemon is busy; retry in %lld ms\n",
            (long long)e->retry_after_ms);
  return sp_client_exit_code(e->code);
}

/* Reads a whole file (NUL-terminated, malloc'd; "-" is standard input); NULL with errno set
 * on failure. */
static char *read_file(const char *path, size_t *len) {
  bool in = strcmp(path, "-") == 0;
  FILE *f = in ? stdin : fopen(path, "rb");
  if (!f) return NULL;
  char *buf;
  int rc = sp_file_read_stream(f, SIZE_MAX, &buf, len);
  if (!in) fclose(f);
  if (rc) errno = rc == SP_ENOMEM ? ENOMEM : EIO;
  return rc ? NULL : buf;
}

static int64_t timeout_ms(const cli *o, double dflt) {
  double s = o->timeout > 0 ? o->timeout : dflt;
  return (int64_t)(s * 1000);
}

/* ---------------------------------------------------------------- progress */

typedef struct progress_state {
  bool drawn;
  double limit;
} progress_state;

static void on_progress(const Shardplan__V1__Progress *p, void *user) {
  progress_state *ps = user;
  char line[160], bar[32];
  int width = 24, fill = 0;
  if (ps->limit > 0) fill = (int)(width * fmin(1.0, p->elapsed_seconds / ps->limit));
  for (int i = 0; i < width; i++) bar[i] = i < fill ? '=' : (i == fill ? '>' : ' ');
  bar[width] = '\0';
  int n = snprintf(line, sizeof line, "[%s] %-11s %6.1f s", bar, p->stage, p->elapsed_seconds);
  if (strcmp(p->stage, "propagation") == 0)
    snprintf(line + n, sizeof line - (size_t)n, "  round %d", p->round);
  else if (p->incumbent > 0)
    snprintf(line + n, sizeof line - (size_t)n, "  best %.4g  gap %.2f%%", p->incumbent,
             100 * p->gap);
  fprintf(stderr, "\r%s\033[K", line);
  fflush(stderr);
  ps->drawn = true;
}

/* ---------------------------------------------------------------- commands */

static int cmd_plan(cli *o, const char *file) {
  size_t len;
  char *text = read_file(file, &len), *cluster_json = NULL, *with_mesh = NULL;
  char **axes = NULL;
  size_t n_axes = 0;
  int rc = 0;
  if (!text) {
    fprintf(stderr, "shardplan: cannot read %s: %s\n", file, strerror(errno));
    return 3;
  }
  Shardplan__V1__PlanRequest req = SHARDPLAN__V1__PLAN_REQUEST__INIT;
  Shardplan__V1__PlanOptions opts = SHARDPLAN__V1__PLAN_OPTIONS__INIT;
  Shardplan__V1__Cluster cl = SHARDPLAN__V1__CLUSTER__INIT;
  req.graph_case = SHARDPLAN__V1__PLAN_REQUEST__GRAPH_MLIR;
  req.mlir = text;
  req.filename = (char *)(strcmp(file, "-") == 0 ? "<stdin>" : file);
  req.options = &opts;
  req.detail = o->full ? SHARDPLAN__V1__DETAIL__DETAIL_FULL : SHARDPLAN__V1__DETAIL__DETAIL_SUMMARY;
  if (o->mesh) {
    char why[256];
    if (sp_cli_mesh_apply(o->mesh, text, &with_mesh, &axes, &n_axes, why, sizeof why) != 0) {
      fprintf(stderr, "shardplan: --mesh %s: %s\n", o->mesh, why);
      rc = 3;
      goto done;
    }
    if (with_mesh) req.mlir = with_mesh;
    opts.n_mesh_axes = n_axes;
    opts.mesh_axes = axes;
  }
  if (o->cluster || o->search) {
    const char *name = o->cluster ? o->cluster : DEFAULT_CLUSTER;
    struct stat sb;
    opts.mode = SHARDPLAN__V1__PLAN_MODE__PLAN_MODE_SEARCH;
    req.cluster = &cl;
    if (stat(name, &sb) == 0) {
      if (!(cluster_json = read_file(name, NULL))) {
        fprintf(stderr, "shardplan: cannot read cluster %s: %s\n", name, strerror(errno));
        rc = 3;
        goto done;
      }
      cl.source_case = SHARDPLAN__V1__CLUSTER__SOURCE_JSON;
      cl.json = cluster_json;
    } else {
      if (strchr(name, '/')) {
        fprintf(stderr, "shardplan: cannot read cluster %s: %s\n", name, strerror(ENOENT));
        rc = 3;
        goto done;
      }
      cl.source_case = SHARDPLAN__V1__CLUSTER__SOURCE_EXAMPLE;
      cl.example = (char *)name;
    }
  }
  opts.time_limit_seconds = o->time_limit;
  opts.gap = o->gap;
  Shardplan__V1__PlanResponse *resp = NULL;
  sp_client_error e;
  double limit = o->time_limit > 0 ? o->time_limit : 10;
  int64_t tmo = timeout_ms(o, limit + 60);
  int crc;
  if (!o->no_progress && isatty(STDERR_FILENO)) {
    progress_state ps = {.limit = limit};
    crc = sp_client_plan_stream(o->client, &req, tmo, on_progress, &ps, &resp, &e);
    if (ps.drawn) fprintf(stderr, "\r\033[K");
  } else {
    crc = sp_client_plan(o->client, &req, tmo, &resp, &e);
  }
  if (crc != SP_CLIENT_OK) {
    rc = fail(&e);
    goto done;
  }
  sp_cli_print_plan(stdout, resp, 24);
  sp_client_free(resp);
done:
  for (size_t i = 0; i < n_axes; i++) free(axes[i]);
  free(axes);
  free(with_mesh);
  free(cluster_json);
  free(text);
  return rc;
}

static int cmd_get(cli *o, const char *key, bool export) {
  Shardplan__V1__PlanResponse *resp = NULL;
  sp_client_error e;
  bool full = export || o->full;
  if (export && !o->format) return usage_error("export needs --format%s", " sdy|jax|gspmd|json");
  int crc = sp_client_get_plan(o->client, key,
                               full ? SHARDPLAN__V1__DETAIL__DETAIL_FULL
                                    : SHARDPLAN__V1__DETAIL__DETAIL_SUMMARY,
                               timeout_ms(o, 10), &resp, &e);
  if (crc != SP_CLIENT_OK) return fail(&e);
  int rc = 0;
  if (export) {
    char why[256];
    if (!sp_cli_export(stdout, resp, o->format, why, sizeof why)) {
      fprintf(stderr, "shardplan: export %s: %s\n", key, why);
      rc = strstr(why, "unknown export format") ? EXIT_USAGE : 1;
    }
  } else {
    sp_cli_print_plan(stdout, resp, 1000);
  }
  sp_client_free(resp);
  return rc;
}

static int cmd_list(cli *o) {
  char *token = NULL;
  bool first = true;
  int rc = 0;
  for (;;) {
    Shardplan__V1__ListPlansResponse *l = NULL;
    sp_client_error e;
    int crc = sp_client_list_plans(o->client, o->page_size, token, timeout_ms(o, 10), &l, &e);
    free(token);
    token = NULL;
    if (crc != SP_CLIENT_OK) {
      rc = fail(&e);
      break;
    }
    sp_cli_print_list(stdout, l, first);
    first = false;
    if (l->next_page_token && l->next_page_token[0]) token = strdup(l->next_page_token);
    sp_client_free(l);
    if (!token) break;
  }
  return rc;
}

static int cmd_delete(cli *o, const char *key) {
  sp_client_error e;
  bool deleted = false;
  int crc = sp_client_delete_plan(o->client, key, timeout_ms(o, 10), &deleted, &e);
  if (crc != SP_CLIENT_OK) return fail(&e);
  if (!deleted) {
    fprintf(stderr, "shardplan: no plan with key %s\n", key);
    return sp_client_exit_code(SP_CLIENT_NOT_FOUND);
  }
  printf("deleted %s\n", key);
  return 0;
}

static int cmd_stats(cli *o) {
  Shardplan__V1__Stats *s = NULL;
  sp_client_error e;
  int crc = sp_client_get_stats(o->client, timeout_ms(o, 10), &s, &e);
  if (crc != SP_CLIENT_OK) return fail(&e);
  sp_cli_print_stats(stdout, s);
  sp_client_free(s);
  return 0;
}

static int cmd_purge(cli *o) {
  if (!o->older && !o->all) return usage_error("purge needs %s", "--older-than-version or --all");
  sp_client_error e;
  int64_t n = 0;
  int crc = sp_client_purge(o->client, o->older, o->all, timeout_ms(o, 60), &n, &e);
  if (crc != SP_CLIENT_OK) return fail(&e);
  printf("purged %lld plan%s\n", (long long)n, n == 1 ? "" : "s");
  return 0;
}

static int cmd_health(cli *o) {
  sp_client_error e;
  int status = 0;
  int crc = sp_client_health(o->client, "", timeout_ms(o, 5), &status, &e);
  if (crc != SP_CLIENT_OK) return fail(&e);
  bool serving = status == GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING;
  printf("%s\n", serving ? "SERVING" : status == 2 ? "NOT_SERVING" : "UNKNOWN");
  return serving ? 0 : sp_client_exit_code(SP_CLIENT_UNAVAILABLE);
}

/* ---------------------------------------------------------------- main */

enum {
  OPT_SERVER = 1000, OPT_TOKEN_FILE, OPT_TLS_CA, OPT_TLS_NAME, OPT_TIMEOUT, OPT_CLUSTER,
  OPT_MESH, OPT_SEARCH, OPT_TIME_LIMIT, OPT_GAP, OPT_FULL, OPT_NO_PROGRESS, OPT_FORMAT,
  OPT_PAGE_SIZE, OPT_OLDER, OPT_ALL, OPT_VERSION
};

static const struct option long_opts[] = {
    {"server", required_argument, NULL, OPT_SERVER},
    {"token-file", required_argument, NULL, OPT_TOKEN_FILE},
    {"tls-ca", required_argument, NULL, OPT_TLS_CA},
    {"tls-server-name", required_argument, NULL, OPT_TLS_NAME},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"cluster", required_argument, NULL, OPT_CLUSTER},
    {"mesh", required_argument, NULL, OPT_MESH},
    {"search", no_argument, NULL, OPT_SEARCH},
    {"time-limit", required_argument, NULL, OPT_TIME_LIMIT},
    {"gap", required_argument, NULL, OPT_GAP},
    {"full", no_argument, NULL, OPT_FULL},
    {"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
    {"format", required_argument, NULL, OPT_FORMAT},
    {"page-size", required_argument, NULL, OPT_PAGE_SIZE},
    {"older-than-version", no_argument, NULL, OPT_OLDER},
    {"all", no_argument, NULL, OPT_ALL},
    {"version", no_argument, NULL, OPT_VERSION},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0}};

/* A non-negative number option; false when it is not one. */
static bool parse_seconds(const char *s, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || *end || !(v >= 0) || v > 1e7) return false;
  *out = v;
  return true;
}

/* Reads the token file: its first line, without surrounding white space. */
static int read_token(const char *path, char **out) {
  char *t = read_file(path, NULL);
  if (!t) {
    fprintf(stderr, "shardplan: cannot read token file %s: %s\n", path, strerror(errno));
    return 3;
  }
  char *s = t;
  while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
  size_t n = strcspn(s, "\r\n");
  while (n && (s[n - 1] == ' ' || s[n - 1] == '\t')) n--;
  memmove(t, s, n);
  t[n] = '\0';
  if (!t[0]) {
    fprintf(stderr, "shardplan: token file %s is empty\n", path);
    free(t);
    return 3;
  }
  *out = t;
  return 0;
}

int main(int argc, char **argv) {
  cli o = {.page_size = 100};
  int c;
  opterr = 0;
  while ((c = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
    switch (c) {
      case OPT_SERVER: o.server = optarg; break;
      case OPT_TOKEN_FILE: o.token_file = optarg; break;
      case OPT_TLS_CA: o.tls_ca = optarg; break;
      case OPT_TLS_NAME: o.tls_name = optarg; break;
      case OPT_CLUSTER: o.cluster = optarg; break;
      case OPT_MESH: o.mesh = optarg; break;
      case OPT_SEARCH: o.search = true; break;
      case OPT_FULL: o.full = true; break;
      case OPT_NO_PROGRESS: o.no_progress = true; break;
      case OPT_FORMAT: o.format = optarg; break;
      case OPT_OLDER: o.older = true; break;
      case OPT_ALL: o.all = true; break;
      case OPT_TIMEOUT:
        if (!parse_seconds(optarg, &o.timeout) || o.timeout == 0)
          return usage_error("--timeout needs a positive number of seconds, not \"%s\"", optarg);
        break;
      case OPT_TIME_LIMIT:
        if (!parse_seconds(optarg, &o.time_limit))
          return usage_error("--time-limit needs a number of seconds, not \"%s\"", optarg);
        break;
      case OPT_GAP:
        if (!parse_seconds(optarg, &o.gap) || o.gap >= 1)
          return usage_error("--gap needs a number in [0, 1), not \"%s\"", optarg);
        break;
      case OPT_PAGE_SIZE: {
        char *end;
        long v = strtol(optarg, &end, 10);
        if (*end || end == optarg || v < 1 || v > 1000)
          return usage_error("--page-size needs a number from 1 to 1000, not \"%s\"", optarg);
        o.page_size = (int)v;
        break;
      }
      case OPT_VERSION: printf("shardplan %s\n", SP_VERSION); return 0;
      case 'h': fputs(usage_text, stdout); return 0;
      default:
        return usage_error("unknown or incomplete option \"%s\"", argv[optind - 1]);
    }
  }
  if (optind >= argc) {
    fputs(usage_text, stderr);
    return EXIT_USAGE;
  }
  const char *cmd = argv[optind];
  int nargs = argc - optind - 1;
  char *const *args = argv + optind + 1;
  static const struct { const char *name; int nargs; } cmds[] = {
      {"plan", 1}, {"get", 1}, {"list", 0}, {"delete", 1}, {"stats", 0}, {"purge", 0},
      {"export", 1}, {"health", 0}};
  int want = -1;
  for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
    if (strcmp(cmd, cmds[i].name) == 0) want = cmds[i].nargs;
  if (want < 0) return usage_error("unknown command \"%s\"", cmd);
  if (nargs != want)
    return usage_error(want ? "%s takes one argument" : "%s takes no argument", cmd);

  char *token = NULL, *ca = NULL;
  const char *token_file = o.token_file ? o.token_file : getenv("SHARDPLAN_TOKEN_FILE");
  if (token_file && token_file[0] && read_token(token_file, &token) != 0) return 3;
  if (o.tls_ca && !(ca = read_file(o.tls_ca, NULL))) {
    fprintf(stderr, "shardplan: cannot read %s: %s\n", o.tls_ca, strerror(errno));
    free(token);
    return 3;
  }
  sp_client_options co = {.target = o.server, .token = token, .tls_ca_pem = ca,
                          .tls_server_name = o.tls_name};
  sp_client_error e;
  if (sp_client_open(&co, &o.client, &e) != SP_CLIENT_OK) {
    free(token);
    free(ca);
    return fail(&e);
  }
  int rc;
  if (strcmp(cmd, "plan") == 0) rc = cmd_plan(&o, args[0]);
  else if (strcmp(cmd, "get") == 0) rc = cmd_get(&o, args[0], false);
  else if (strcmp(cmd, "export") == 0) rc = cmd_get(&o, args[0], true);
  else if (strcmp(cmd, "list") == 0) rc = cmd_list(&o);
  else if (strcmp(cmd, "delete") == 0) rc = cmd_delete(&o, args[0]);
  else if (strcmp(cmd, "stats") == 0) rc = cmd_stats(&o);
  else if (strcmp(cmd, "purge") == 0) rc = cmd_purge(&o);
  else rc = cmd_health(&o);
  sp_client_close(o.client);
  free(token);
  free(ca);
  fflush(stdout);
  return rc;
}
