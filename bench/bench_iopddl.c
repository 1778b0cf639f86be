/*
 * bench_iopddl - the strategy-graph solver on the public IOPDDL contest problems.
 *
 *   bench_iopddl --dir SHARED/benchmarks/iopddl [--only B,G,V,P] [--small S] [--large S]
 *
 * Solves each problem once with its time limit (B and G: --small, default 120 s; V and P:
 * --large, default 300 s), one after the other, and prints a Markdown table: sizes before
 * and after reduction, the plan's cost (checked on the input graph), status, lower bound and
 * gap, wall time against the limit, time to the last incumbent, and the reference scores.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/clock.h"
#include "solver/solver.h"

typedef struct instance {
  const char *name, *file;
  bool large;
  const char *reference;
} instance;

static const instance INSTANCES[] = {
    {"B", "asplos-2025-iopddl-B.json.gz", false, "532,843 (optimal)"},
    {"G", "asplos-2025-iopddl-G.json.gz", false, "217,039 (optimal)"},
    {"V", "asplos-2025-iopddl-V.json.gz", true,
     "1,632,051 best entry; 2,213,404 contest winner"},
    {"P", "asplos-2025-iopddl-P.json.gz", true, "662,197,407,330 contest winner"},
};

typedef struct last_incumbent {
  double seconds;
  int64_t cost;
} last_incumbent;

static void on_progress(void *ctx, const sp_sg_progress *p) {
  last_incumbent *li = ctx;
  if (strcmp(p->note, "new incumbent") == 0) {
    li->seconds = p->seconds;
    li->cost = p->cost;
  }
}

/* 1234567 -> "1,234,567" */
static const char *commas(int64_t v, char *buf, size_t n) {
  char raw[32];
  snprintf(raw, sizeof raw, "%lld", (long long)(v < 0 ? -v : v));
  size_t len = strlen(raw), o = 0;
  if (v < 0 && o + 1 < n) buf[o++] = '-';
  for (size_t i = 0; i < len && o + 2 < n; i++) {
    if (i > 0 && (len - i) % 3 == 0) buf[o++] = ',';
    buf[o++] = raw[i];
  }
  buf[o] = '\0';
  return buf;
}

int main(int argc, char **argv) {
  static const struct option longopts[] = {{"dir", required_argument, NULL, 'd'},
                                           {"only", required_argument, NULL, 'o'},
                                           {"small", required_argument, NULL, 's'},
                                           {"large", required_argument, NULL, 'l'},
                                           {NULL, 0, NULL, 0}};
  const char *dir = NULL, *only = "B,G,V,P";
  double small = 120, large = 300;
  int ch;
  while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
    switch (ch) {
      case 'd': dir = optarg; break;
      case 'o': only = optarg; break;
      case 's': small = atof(optarg); break;
      case 'l': large = atof(optarg); break;
      default:
        fprintf(stderr, "usage: bench_iopddl --dir DIR [--only B,G,V,P] [--small S] [--large S]\n");
        return 2;
    }
  }
  if (!dir) {
    fprintf(stderr, "bench_iopddl: --dir DIR (the folder with asplos-2025-iopddl-*.json.gz) "
            "is required\n");
    return 2;
  }
  printf("| problem | nodes / edges | after reduction | cost | status | bound | gap | time s "
         "(limit) | last incumbent at s | reference |\n");
  printf("|---|---:|---:|---:|---|---:|---:|---:|---:|---|\n");
  int failures = 0;
  char details[4][256];
  int ndetails = 0;
  for (size_t k = 0; k < sizeof INSTANCES / sizeof INSTANCES[0]; k++) {
    const instance *in = &INSTANCES[k];
    if (!strstr(only, in->name)) continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, in->file);
    sp_err err;
    sp_sg *g = NULL;
    if (sp_iopddl_read_file(path, &g, &err) != SP_OK) {
      fprintf(stderr, "bench_iopddl: %s\n", err.msg);
      failures++;
      continue;
    }
    sp_sg_opts o;
    sp_sg_opts_init(&o);
    o.time_limit = in->large ? large : small;
    last_incumbent li = {0, 0};
    o.progress = on_progress;
    o.progress_ctx = &li;
    sp_sg_result r;
    double t0 = sp_clock_now();
    int rc = sp_sg_solve(g, &o, &r, &err);
    double wall = sp_clock_now() - t0;
    if (rc != SP_OK) {
      fprintf(stderr, "bench_iopddl: %s: %s\n", in->name, err.msg);
      failures++;
      sp_sg_free(g);
      continue;
    }
    sp_sg_eval ev;
    bool valid = r.has_plan && sp_sg_evaluate(g, r.choice, &ev, NULL) == SP_OK && ev.valid &&
                 ev.cost == r.cost;
    char c1[40], c2[40];
    printf("| %s | %d / %d | %d / %d | %s%s | %s | %s | %.2f%% | %.1f (%.0f) | %.1f | %s |\n",
           in->name, g->nnodes, g->nedges, r.stats.red_nodes, r.stats.red_edges,
           r.has_plan ? commas(r.cost, c1, sizeof c1) : "none", valid ? "" : " (INVALID)",
           sp_sg_status_name(r.status),
           r.bound != INT64_MIN ? commas(r.bound, c2, sizeof c2) : "-", 100.0 * r.gap, wall,
           o.time_limit, li.seconds, in->reference);
    fflush(stdout);
    const sp_sg_stats *st = &r.stats;
    snprintf(details[ndetails++], sizeof details[0],
             "| %s | %lld / %lld | %lld / %lld / %lld | %.2f | %.2f | %.2f | %.2f |\n", in->name,
             (long long)st->red_strategies, (long long)st->red_pairs, (long long)st->ilp_cols,
             (long long)st->ilp_rows, (long long)st->ilp_nonzeros, st->t_reduce,
             st->t_heuristic, st->t_lp, st->t_ilp);
    if (!valid) failures++;
    sp_sg_result_free(&r);
    sp_sg_free(g);
  }
  printf("\n| problem | strategies / pairs after reduction | ILP columns / rows / nonzeros "
         "| reduce s | heuristic s | root LP s | branch and bound s |\n");
  printf("|---|---:|---:|---:|---:|---:|---:|\n");
  for (int d = 0; d < ndetails; d++) fputs(details[d], stdout);
  return failures ? 1 : 0;
}
