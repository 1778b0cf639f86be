/*
 * bench_propagation.c - time and memory of sharding propagation on generated transformer
 * graphs, from 10^3 to 10^5 ops, next to parsing and printing the same modules.
 *
 * For each size, a GPT model (server/gen/model_gen.h: forward and backward pass, megatron
 * annotations on the data=2, model=4 mesh, so that there is something to propagate) with the
 * layer count that gives about that many ops is written as MLIR text. A child process then
 * times, best of R runs each:
 *   parse      sp_mlir_parse of the text
 *   basic      sp_propagate_module, basic strategy (-sdy-basic-propagate)
 *   aggressive sp_propagate_module, aggressive strategy (-sdy-aggressive-propagate)
 *   user-prio  sp_user_priority_propagate: user priorities over the 5 op-priority rounds of
 *              aggressive fixed points (the propagation step of -sdy-propagation-pipeline)
 *   print      sp_mlir_print of the module after user-priority propagation
 * (every propagation run gets a freshly parsed module), and reports the module's arena bytes
 * after parsing and what propagation added to it, and the child's peak RSS (getrusage via
 * wait4: each size runs in its own process, so the figure is that size's own peak).
 *
 * Output: a Markdown table (one row per size) with ms and ns/op, so that linear growth shows as
 * constant ns/op. Exit status 1 if a run fails or propagation changes nothing.
 *
 * Usage: bench_propagation [--sizes N,N,...] [--reps R]
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gen/model_gen.h"
#include "ir/clock.h"
#include "ir/ir.h"
#include "mlir/mlir.h"
#include "propagation/propagate.h"
#include "propagation/user_priority.h"

#define MAX_SIZES 16

typedef struct result {
  int64_t ops;
  double parse_ms, basic_ms, aggressive_ms, user_ms, print_ms;
  int64_t updates_basic, updates_user;
  size_t arena_parsed, arena_added;
} result;

static double min_d(double a, double b) { return a < b ? a : b; }

static int generate(int64_t target, sp_strbuf *text, int64_t *nops) {
  sp_gen_options o;
  sp_gen_default_options(&o);
  o.model = SP_GEN_GPT;
  o.backward = true;
  o.annotate = SP_GEN_ANNOTATE_MEGATRON;
  int64_t per = sp_gen_ops_per_layer(&o);
  int64_t layers = per > 0 ? (target + per / 2) / per : 1;
  o.layers = layers < 1 ? 1 : (int)layers;
  sp_err err;
  if (sp_gen_write(&o, text, nops, &err) != SP_OK) {
    fprintf(stderr, "bench_propagation: generating %" PRId64 " ops: %s\n", target, err.msg);
    return 1;
  }
  return 0;
}

static int parse(const sp_strbuf *text, sp_module **m, double *ms) {
  sp_err err;
  double t0 = 1e3 * sp_clock_now();
  int rc = sp_mlir_parse(text->buf, text->len, "bench.mlir", 1, m, &err);
  double t = 1e3 * sp_clock_now() - t0;
  if (rc) {
    fprintf(stderr, "bench_propagation: parse: %s\n", err.msg);
    return 1;
  }
  *ms = min_d(*ms, t);
  return 0;
}

enum { RUN_BASIC, RUN_AGGRESSIVE, RUN_USER };

/* One propagation run of kind `kind` on a fresh module; the last user-priority module is kept
 * in *keep for printing. */
static int propagate_once(const sp_strbuf *text, int kind, result *r, sp_module **keep) {
  sp_module *m = NULL;
  if (parse(text, &m, &r->parse_ms)) return 1;
  size_t before = sp_arena_bytes(m->arena);
  sp_propagate_options o = {.strategy = kind == RUN_BASIC ? SP_PROP_BASIC : SP_PROP_AGGRESSIVE};
  sp_propagate_stats st;
  sp_err err;
  double t0 = 1e3 * sp_clock_now();
  int rc = kind == RUN_USER ? sp_user_priority_propagate(m, &o, &st, &err)
                            : sp_propagate_module(m, &o, &st, &err);
  double t = 1e3 * sp_clock_now() - t0;
  if (rc) {
    fprintf(stderr, "bench_propagation: propagation: %s\n", err.msg);
    sp_module_free(m);
    return 1;
  }
  if (kind == RUN_BASIC) {
    r->basic_ms = min_d(r->basic_ms, t);
    r->updates_basic = st.updates;
  } else if (kind == RUN_AGGRESSIVE) {
    r->aggressive_ms = min_d(r->aggressive_ms, t);
  } else {
    r->user_ms = min_d(r->user_ms, t);
    r->updates_user = st.updates;
    r->arena_parsed = before;
    r->arena_added = sp_arena_bytes(m->arena) - before;
  }
  if (kind == RUN_USER && keep) {
    sp_module_free(*keep);
    *keep = m;
  } else {
    sp_module_free(m);
  }
  return 0;
}

/* Everything for one size; runs in the child. */
static int measure(int64_t target, int reps, result *r) {
  sp_strbuf text = SP_STRBUF_INIT;
  memset(r, 0, sizeof *r);
  r->parse_ms = r->basic_ms = r->aggressive_ms = r->user_ms = r->print_ms = 1e300;
  if (generate(target, &text, &r->ops)) return 1;
  sp_module *keep = NULL;
  int rc = 0;
  for (int i = 0; i < reps && !rc; i++)
    for (int kind = RUN_BASIC; kind <= RUN_USER && !rc; kind++)
      rc = propagate_once(&text, kind, r, &keep);
  for (int i = 0; i < reps && !rc; i++) {
    sp_strbuf out = SP_STRBUF_INIT;
    sp_err err;
    double t0 = 1e3 * sp_clock_now();
    rc = sp_mlir_print(keep, &out, &err) != SP_OK;
    r->print_ms = min_d(r->print_ms, 1e3 * sp_clock_now() - t0);
    sp_strbuf_free(&out);
  }
  sp_module_free(keep);
  sp_strbuf_free(&text);
  if (!rc && (r->updates_basic == 0 || r->updates_user == 0)) {
    fprintf(stderr, "bench_propagation: propagation changed nothing at %" PRId64 " ops\n", r->ops);
    rc = 1;
  }
  return rc;
}

/* Runs measure() in a child; *maxrss_kb is the child's peak RSS. */
static int measure_in_child(int64_t target, int reps, result *r, long *maxrss_kb) {
  int fd[2];
  if (pipe(fd) != 0) return 1;
  pid_t pid = fork();
  if (pid < 0) return 1;
  if (pid == 0) {
    close(fd[0]);
    result res;
    int rc = measure(target, reps, &res);
    if (!rc && write(fd[1], &res, sizeof res) != (ssize_t)sizeof res) rc = 1;
    close(fd[1]);
    _exit(rc);
  }
  close(fd[1]);
  ssize_t n = read(fd[0], r, sizeof *r);
  close(fd[0]);
  int status = 0;
  struct rusage ru;
  if (wait4(pid, &status, 0, &ru) != pid) return 1;
  *maxrss_kb = ru.ru_maxrss;
  return !(WIFEXITED(status) && WEXITSTATUS(status) == 0 && n == (ssize_t)sizeof *r);
}

static int parse_sizes(const char *s, int64_t *sizes, int *n) {
  *n = 0;
  while (*s && *n < MAX_SIZES) {
    char *end;
    double v = strtod(s, &end);
    if (end == s || v < 1) return 1;
    sizes[(*n)++] = (int64_t)v;
    s = *end == ',' ? end + 1 : end;
    if (*end && *end != ',') return 1;
  }
  return *n == 0;
}

static double ns_per_op(double ms, int64_t ops) { return ms * 1e6 / (double)ops; }

int main(int argc, char **argv) {
  int64_t sizes[MAX_SIZES] = {1000, 3000, 10000, 30000, 100000};
  int nsizes = 5, reps = 3;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc) {
      if (parse_sizes(argv[++i], sizes, &nsizes)) {
        fprintf(stderr, "bench_propagation: bad --sizes '%s' (e.g. 1e3,1e4,1e5)\n", argv[i]);
        return 2;
      }
    } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
      reps = atoi(argv[++i]);
      if (reps < 1) reps = 1;
    } else {
      fprintf(stderr, "usage: bench_propagation [--sizes N,N,...] [--reps R]\n");
      return 2;
    }
  }
  printf("| ops | parse ms (ns/op) | basic ms (ns/op) | aggressive ms (ns/op) | user-priority ms "
         "(ns/op) | print ms | arena MB parsed / +propagation | peak RSS MB |\n");
  printf("|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  int failed = 0;
  for (int i = 0; i < nsizes; i++) {
    result r;
    long rss = 0;
    if (measure_in_child(sizes[i], reps, &r, &rss)) {
      fprintf(stderr, "bench_propagation: size %" PRId64 " failed\n", sizes[i]);
      failed = 1;
      continue;
    }
    printf("| %" PRId64 " | %.1f (%.0f) | %.1f (%.0f) | %.1f (%.0f) | %.1f (%.0f) | %.1f | "
           "%.1f / +%.1f | %.0f |\n",
           r.ops, r.parse_ms, ns_per_op(r.parse_ms, r.ops), r.basic_ms,
           ns_per_op(r.basic_ms, r.ops), r.aggressive_ms, ns_per_op(r.aggressive_ms, r.ops),
           r.user_ms, ns_per_op(r.user_ms, r.ops), r.print_ms, (double)r.arena_parsed / 1048576.0,
           (double)r.arena_added / 1048576.0, (double)rss / 1024.0);
    fflush(stdout);
  }
  return failed;
}
