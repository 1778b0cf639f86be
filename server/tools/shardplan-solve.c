/*
 * shardplan-solve - solve an IOPDDL contest problem (strategy graph) from a file.
 *
 *   shardplan-solve PROBLEM.json[.gz] SECONDS [--write-lp FILE] [--write-lp-unreduced FILE]
 *                   [--gap G] [--seed N] [--work N] [--no-ilp] [--no-reduce] [-v]
 *
 * stdout: the plan as "[k0, k1, ...]" (one strategy index per node, as the contest's own
 * tool prints it). stderr: incumbents as they are found, then cost, status, gap and time.
 * Exit status: 0 a plan was found, 1 no plan (infeasible or none found in time),
 * 2 bad usage or a bad problem file, 3 internal failure.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/clock.h"
#include "solver/solver.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: shardplan-solve PROBLEM.json[.gz] SECONDS [options]\n"
          "  --write-lp FILE            write the reduced one-hot ILP (CPLEX LP format)\n"
          "  --write-lp-unreduced FILE  write the unreduced one-hot ILP\n"
          "  --gap G                    stop at relative gap G (default 0: prove optimal)\n"
          "  --seed N                   perturbation seed (default 1)\n"
          "  --work N                   heuristic work limit (cost entries read)\n"
          "  --no-ilp                   heuristic only\n"
          "  --no-reduce                skip the model reductions\n"
          "  -v                         report every phase, not only incumbents\n");
}

typedef struct progress_ctx {
  bool verbose;
} progress_ctx;

static void on_progress(void *ctx, const sp_sg_progress *p) {
  const progress_ctx *c = ctx;
  bool incumbent = strcmp(p->note, "new incumbent") == 0;
  if (!incumbent && !c->verbose) return;
  fprintf(stderr, "[%8.3f s] %-12s", p->seconds, p->phase);
  if (p->has_plan) fprintf(stderr, " cost %lld", (long long)p->cost);
  if (p->bound != INT64_MIN) fprintf(stderr, " bound %lld", (long long)p->bound);
  if (p->note[0] && !incumbent) fprintf(stderr, "  %s", p->note);
  if (incumbent) fprintf(stderr, "  incumbent");
  fputc('\n', stderr);
}

static bool parse_double(const char *s, double *out) {
  char *end;
  *out = strtod(s, &end);
  return end != s && *end == '\0' && isfinite(*out);
}

int main(int argc, char **argv) {
  static const struct option longopts[] = {
      {"write-lp", required_argument, NULL, 'w'},
      {"write-lp-unreduced", required_argument, NULL, 'u'},
      {"gap", required_argument, NULL, 'g'},
      {"seed", required_argument, NULL, 's'},
      {"work", required_argument, NULL, 'k'},
      {"no-ilp", no_argument, NULL, 'I'},
      {"no-reduce", no_argument, NULL, 'R'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  const char *lp_reduced = NULL, *lp_unreduced = NULL;
  sp_sg_opts opts;
  sp_sg_opts_init(&opts);
  progress_ctx pc = {false};
  int ch;
  while ((ch = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
    switch (ch) {
      case 'w': lp_reduced = optarg; break;
      case 'u': lp_unreduced = optarg; break;
      case 'g':
        if (!parse_double(optarg, &opts.gap) || opts.gap < 0 || opts.gap >= 1) {
          fprintf(stderr, "shardplan-solve: --gap wants a number in [0, 1), not \"%s\"\n", optarg);
          return 2;
        }
        break;
      case 's': opts.seed = strtoull(optarg, NULL, 10); break;
      case 'k': opts.work_limit = strtoll(optarg, NULL, 10); break;
      case 'I': opts.no_ilp = true; break;
      case 'R': opts.no_reduce = true; break;
      case 'v': pc.verbose = true; break;
      case 'h': usage(stdout); return 0;
      default: usage(stderr); return 2;
    }
  }
  if (argc - optind != 2) {
    usage(stderr);
    return 2;
  }
  const char *path = argv[optind];
  double seconds;
  if (!parse_double(argv[optind + 1], &seconds) || seconds <= 0) {
    fprintf(stderr, "shardplan-solve: SECONDS must be a positive number, not \"%s\"\n",
            argv[optind + 1]);
    return 2;
  }
  double t_start = sp_clock_now();
  opts.progress = on_progress;
  opts.progress_ctx = &pc;
  sp_err err;
  sp_err_clear(&err);
  sp_sg *g = NULL;
  if (sp_iopddl_read_file(path, &g, &err) != SP_OK) {
    fprintf(stderr, "shardplan-solve: %s\n", err.msg);
    return 2;
  }
  int status = 0;
  if (lp_reduced && sp_sg_write_lp(g, true, lp_reduced, &err) != SP_OK) {
    fprintf(stderr, "shardplan-solve: %s\n", err.msg);
    status = 2;
  }
  if (status == 0 && lp_unreduced && sp_sg_write_lp(g, false, lp_unreduced, &err) != SP_OK) {
    fprintf(stderr, "shardplan-solve: %s\n", err.msg);
    status = 2;
  }
  /* SECONDS covers the whole run: reading and writing files count, and 2% is kept for
   * printing the plan and exiting. */
  double left = seconds * 0.98 - (sp_clock_now() - t_start);
  opts.time_limit = left > seconds * 0.02 ? left : seconds * 0.02;
  sp_sg_result res;
  if (status == 0 && sp_sg_solve(g, &opts, &res, &err) != SP_OK) {
    fprintf(stderr, "shardplan-solve: %s: %s\n", path, err.msg);
    status = 3;
  }
  if (status == 0) {
    if (res.has_plan) {
      char *s = sp_sg_format_plan(g, res.choice);
      if (s) puts(s);
      free(s);
      fprintf(stderr, "cost %lld\n", (long long)res.cost);
    } else {
      fprintf(stderr, "cost none\n");
    }
    fprintf(stderr, "status %s\n", sp_sg_status_name(res.status));
    if (res.bound != INT64_MIN) fprintf(stderr, "bound %lld\n", (long long)res.bound);
    if (res.has_plan) fprintf(stderr, "gap %.6f\n", res.gap);
    const sp_sg_stats *st = &res.stats;
    fprintf(stderr, "time %.3f s (reduce %.3f, heuristic %.3f, lp %.3f, ilp %.3f)\n",
            st->seconds, st->t_reduce, st->t_heuristic, st->t_lp, st->t_ilp);
    fprintf(stderr, "model %d nodes %d edges -> %d nodes %d edges, %lld strategies, %lld "
            "pairs, %d components; ilp %lld cols %lld rows (%lld usage) %lld nonzeros\n",
            st->nodes, st->edges, st->red_nodes, st->red_edges, (long long)st->red_strategies,
            (long long)st->red_pairs, st->components, (long long)st->ilp_cols,
            (long long)st->ilp_rows, (long long)st->ilp_mem_rows,
            (long long)st->ilp_nonzeros);
    status = res.has_plan ? 0 : 1;
    sp_sg_result_free(&res);
  }
  sp_sg_free(g);
  return status;
}
