/*
 * shardplan-opt.c - the offline driver: reads an MLIR file, verifies it, runs passes, prints
 * the module in Shardy's textual form (like Shardy's sdy_opt, so that its lit tests can run
 * against shardplan with LLVM's FileCheck).
 *
 *   shardplan-opt [FILE|-] [-split-input-file] [-o FILE] [-<pass>[=options] ...]
 *
 * Flags are MLIR style: one dash and a long name (`-split-input-file`); two dashes are accepted
 * too. The pass flags are the registry's (plan/passes.h), shared with the daemon. Passes run in command-line order on each module; a pass flag may carry an option string
 * (`-sdy-basic-propagate=conservative-propagation=true`, with or without quotes around the
 * value). With -split-input-file each `// -----` chunk is an independent module; their outputs
 * are separated by `// -----` lines and a failing chunk does not stop the others.
 *
 * Exit status: 0 success, 1 a chunk failed to parse, verify or run, or I/O failed, 2 usage.
 * Errors and the warnings passes emit (ir/diag.h) go to stderr as `FILE:LINE:COL: warning:
 * message`. With -verify-diagnostics they are instead matched against the input's
 * `// expected-error@+N {{...}}` annotations like mlir-opt does: exit 0 iff every chunk's
 * diagnostics match, mismatches reported on stderr. -report-json=FILE writes, for every chunk,
 * each op's factor tables before and after the passes and the conflicts met
 * (propagation/report.h) as {"modules": [...]}.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/diag.h"
#include "ir/err.h"
#include "ir/file_read.h"
#include "ir/ir.h"
#include "ir/sp_limits.h"
#include "ir/strbuf.h"
#include "mlir/mlir.h"
#include "propagation/conflict.h"
#include "plan/passes.h"
#include "propagation/report.h"
#include "rules/registry.h"
#include "search/plan_search.h"

/* The verifier is a separate stage; use it when it is part of the build. */
#if __has_include("ir/verify.h")
#include "ir/verify.h"
#define HAVE_VERIFIER 1
#else
#define HAVE_VERIFIER 0
#endif

/* ------------------------------------------------------------------ passes */

/* A pass flag from the command line: the registry's pass (plan/passes.h) and its options. */
typedef struct pass_request {
  sp_pass_info pass;
  const char *options;
} pass_request;

/* -shardplan-search hands back its cost summary: printed to stderr and, with report=FILE,
 * written as JSON into FILE. */
static int report_search(const sp_plan_summary *s, sp_err *err) {
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_plan_summary_print(&sb, s);
  fputs(sp_strbuf_str(&sb), stderr);
  sp_strbuf_free(&sb);
  if (!s->report_path) return SP_OK;
  cJSON *j = sp_plan_summary_to_json(s);
  char *text = j ? cJSON_Print(j) : NULL;
  cJSON_Delete(j);
  if (!text) return sp_err_set(err, SP_ENOMEM, "-shardplan-search: out of memory");
  FILE *f = fopen(s->report_path, "wb");
  bool written = f && fputs(text, f) >= 0 && fputc('\n', f) != EOF;
  if (f && fclose(f) != 0) written = false;
  free(text);
  if (!written)
    return sp_err_set(err, SP_EIO, "-shardplan-search: cannot write report '%s': %s",
                      s->report_path, strerror(errno));
  return SP_OK;
}

/* Runs one requested pass, then reports what it handed back. */
static int run_pass(const pass_request *r, sp_module *m, sp_err *err) {
  sp_pass_ctx ctx;
  memset(&ctx, 0, sizeof ctx);
  int rc = sp_pass_run(&r->pass, m, r->options, &ctx, err);
  if (!rc && ctx.has_summary) rc = report_search(&ctx.summary, err);
  return rc;
}

/* ------------------------------------------------------------------ options */

typedef struct options {
  const char *input;        /* NULL or "-" = stdin */
  const char *output;       /* NULL = stdout */
  bool split_input_file;
  bool verify_diagnostics;  /* match expected-* annotations instead of printing diagnostics */
  bool allow_unregistered;  /* -allow-unregistered-dialect (mlir/mlir.h sp_mlir_dialects) */
  const char *report_json;  /* -report-json=FILE: factor tables and conflicts of every chunk */
  sp_rules_diag *warned;    /* registry warnings given in this run (once per kind, as sdy_opt) */
  pass_request *requests;
  int nrequests;
} options;

static void usage(FILE *f) {
  fprintf(f,
          "usage: shardplan-opt [FILE|-] [options] [passes]\n"
          "Reads StableHLO + sdy MLIR, verifies it, runs the passes in order, prints the module.\n"
          "\n"
          "options:\n"
          "  -split-input-file     treat each '// -----' chunk as a separate module\n"
          "  -o FILE               write the output to FILE (default: stdout)\n"
          "  -verify-diagnostics   check expected-error/-warning annotations (like mlir-opt)\n"
          "  -report-json=FILE     write each op's factor tables before/after and the conflicts\n"
          "  -allow-unregistered-dialect  accept ops (generic form), attributes and types of\n"
          "                        dialects other than builtin, func, sdy, stablehlo, chlo,\n"
          "                        mhlo and arith, as mlir-opt does\n"
          "  -help                 print this help\n"
          "\n"
          "passes (-name or -name=options):\n");
  sp_pass_info p;
  for (int i = 0; sp_pass_at(i, &p); i++) fprintf(f, "  -%-36s %s\n", p.flag, p.help);
}

/* Strips one level of matching quotes: conservative-propagation="true" stays, "a=b" -> a=b. */
static const char *unquote(char *s) {
  size_t n = strlen(s);
  if (n >= 2 && (s[0] == '"' || s[0] == '\'') && s[n - 1] == s[0]) {
    s[n - 1] = '\0';
    return s + 1;
  }
  return s;
}

static int parse_args(int argc, char **argv, options *o) {
  o->requests = calloc((size_t)argc, sizeof *o->requests);
  if (!o->requests) return 1;
  bool options_done = false; /* after `--` every argument is a file (as LLVM's parser) */
  for (int i = 1; i < argc; i++) {
    char *a = argv[i];
    if (!options_done && strcmp(a, "--") == 0) {
      options_done = true;
      continue;
    }
    if (options_done || a[0] != '-' || strcmp(a, "-") == 0) {
      if (o->input) {
        fprintf(stderr, "shardplan-opt: more than one input file ('%s' and '%s')\n", o->input, a);
        return 2;
      }
      o->input = a;
      continue;
    }
    char *name = a + 1;
    if (*name == '-') name++; /* --flag works like -flag */
    char *eq = strchr(name, '=');
    size_t n = eq ? (size_t)(eq - name) : strlen(name);
    if (n == 16 && strncmp(name, "split-input-file", n) == 0 && !eq) {
      o->split_input_file = true;
    } else if (n == 18 && strncmp(name, "verify-diagnostics", n) == 0 && !eq) {
      o->verify_diagnostics = true;
    } else if (n == 26 && strncmp(name, "allow-unregistered-dialect", n) == 0 && !eq) {
      o->allow_unregistered = true;
    } else if (n == 11 && strncmp(name, "report-json", n) == 0) {
      if (!eq || !eq[1]) {
        fprintf(stderr, "shardplan-opt: -report-json needs a file name (-report-json=FILE)\n");
        return 2;
      }
      o->report_json = eq + 1;
    } else if ((n == 1 && name[0] == 'h') || (n == 4 && strncmp(name, "help", 4) == 0)) {
      usage(stdout);
      exit(0);
    } else if (n == 1 && name[0] == 'o') {
      if (eq) {
        o->output = eq + 1;
      } else if (i + 1 < argc) {
        o->output = argv[++i];
      } else {
        fprintf(stderr, "shardplan-opt: -o needs a file name\n");
        return 2;
      }
    } else {
      sp_pass_info p;
      if (!sp_pass_find(name, n, &p)) {
        fprintf(stderr, "shardplan-opt: unknown option '%s'\n", a);
        usage(stderr);
        return 2;
      }
      o->requests[o->nrequests].pass = p;
      o->requests[o->nrequests].options = eq ? unquote(eq + 1) : NULL;
      o->nrequests++;
    }
  }
  return 0;
}

/* ------------------------------------------------------------------ I/O */

/* Turns a failure into an error diagnostic at the place its message names. */
static void add_error(sp_diag_list *diags, const char *file, const sp_err *err) {
  sp_loc loc;
  const char *rest;
  sp_diag_split_message(file, err->msg, &loc, &rest);
  /* Further lines are errors at the same place (the reader's "failed to parse ..." chain). */
  for (const char *nl; (nl = strchr(rest, '\n')) != NULL; rest = nl + 1)
    sp_diag_emit(diags, SP_DIAG_ERROR, loc, "%.*s", (int)(nl - rest), rest);
  sp_diag_emit(diags, SP_DIAG_ERROR, loc, "%s", rest);
}

/* Ends a chunk's diagnostics: under -verify-diagnostics they are matched against the chunk's
 * expected-* annotations (the result is whether they all matched), otherwise printed to stderr
 * in the order they were emitted (the result is `ok`). */
static bool finish_diagnostics(const options *o, const char *file, const char *text, size_t len,
                               int first_line, const sp_diag_list *diags, bool ok) {
  sp_strbuf sb = SP_STRBUF_INIT;
  if (o->verify_diagnostics) {
    int problems = sp_diag_verify(text, len, first_line, file, diags, &sb);
    ok = problems == 0;
    if (problems < 0) fprintf(stderr, "shardplan-opt: out of memory verifying diagnostics\n");
  } else {
    for (int i = 0; i < diags->n; i++) sp_diag_format(&sb, file, &diags->v[i]);
  }
  fputs(sp_strbuf_str(&sb), stderr);
  if (diags->oom) fprintf(stderr, "shardplan-opt: out of memory: diagnostics were dropped\n");
  sp_strbuf_free(&sb);
  return ok;
}

/* Parses, verifies, transforms and prints one module; false on failure (already reported).
 * With `reports`, appends the chunk's propagation report (report.h) to that JSON array. */
static bool process(const options *o, const char *file, const char *text, size_t len,
                    int first_line, sp_strbuf *out, cJSON *reports) {
  sp_module *m = NULL;
  sp_err err;
  sp_diag_list diags;
  sp_conflict_log log;
  sp_arena *log_arena = NULL;
  sp_prop_report *rep = NULL;
  sp_diag_list_init(&diags);
  sp_err_clear(&err);
  bool ok = true;
  sp_mlir_dialects dialects =
      o->allow_unregistered ? SP_MLIR_UNREGISTERED_GENERIC : SP_MLIR_REGISTERED_DIALECTS;
  if (sp_mlir_parse_dialects(text, len, file, first_line, dialects, &m, &err) != SP_OK) {
    add_error(&diags, file, &err);
    ok = false;
    goto done;
  }
  m->diags = &diags;
  m->warned = o->warned;
#if HAVE_VERIFIER
  if (sp_verify_module(m, &err) != SP_OK) {
    add_error(&diags, file, &err);
    ok = false;
  }
#endif
  if (ok && reports) {
    if (!(log_arena = sp_arena_new(0))) {
      sp_err_set(&err, SP_ENOMEM, "out of memory");
    } else {
      sp_conflict_log_init(&log, log_arena);
      m->conflicts = &log;
      sp_prop_report_begin(m, false, &rep, &err);
    }
    if (!rep) {
      add_error(&diags, file, &err);
      ok = false;
    }
  }
  for (int i = 0; ok && i < o->nrequests; i++) {
    if (run_pass(&o->requests[i], m, &err) != SP_OK) {
      add_error(&diags, file, &err);
      ok = false;
    }
  }
  if (ok && rep) {
    cJSON *j = NULL;
    if (sp_prop_report_end(rep, &log, &j, &err) != SP_OK) {
      add_error(&diags, file, &err);
      ok = false;
    } else {
      cJSON_AddItemToArray(reports, j);
    }
  }
  if (ok && sp_mlir_print(m, out, &err) != SP_OK) {
    add_error(&diags, file, &err);
    ok = false;
  }
done:
  ok = finish_diagnostics(o, file, text, len, first_line, &diags, ok);
  sp_prop_report_free(rep);
  sp_arena_free(log_arena);
  sp_diag_list_free(&diags);
  sp_module_free(m);
  return ok;
}

/* Writes the collected reports as {"modules": [...]} into o->report_json. */
static bool write_reports(const options *o, cJSON *reports) {
  cJSON *root = cJSON_CreateObject();
  if (root) cJSON_AddItemToObject(root, "modules", reports);
  char *text = root ? cJSON_Print(root) : NULL;
  if (root) cJSON_Delete(root);
  else cJSON_Delete(reports);
  if (!text) {
    fprintf(stderr, "shardplan-opt: out of memory writing the report\n");
    return false;
  }
  FILE *f = fopen(o->report_json, "wb");
  bool ok = f && fputs(text, f) >= 0 && fputc('\n', f) != EOF;
  if (f && fclose(f) != 0) ok = false;
  if (!ok) fprintf(stderr, "shardplan-opt: cannot write '%s': %s\n", o->report_json, strerror(errno));
  free(text);
  return ok;
}

int main(int argc, char **argv) {
  options o;
  memset(&o, 0, sizeof o);
  sp_rules_diag warned;
  memset(&warned, 0, sizeof warned);
  o.warned = &warned;
  int rc = parse_args(argc, argv, &o);
  if (rc) {
    free(o.requests);
    return rc;
  }
  bool from_stdin = !o.input || strcmp(o.input, "-") == 0;
  const char *file = from_stdin ? "<stdin>" : o.input;
  FILE *in = from_stdin ? stdin : fopen(o.input, "rb");
  if (!in) {
    fprintf(stderr, "shardplan-opt: cannot open '%s': %s\n", o.input, strerror(errno));
    free(o.requests);
    return 1;
  }
  size_t len = 0;
  char *text;
  sp_file_read_stream(in, (size_t)SP_MAX_INPUT_BYTES, &text, &len);
  if (!from_stdin) fclose(in);
  if (!text) {
    fprintf(stderr, "shardplan-opt: cannot read '%s': %s\n", file,
            errno == EFBIG ? "larger than SP_MAX_INPUT_BYTES" : strerror(errno));
    free(o.requests);
    return 1;
  }

  sp_strbuf out = SP_STRBUF_INIT;
  bool ok = true;
  cJSON *reports = o.report_json ? cJSON_CreateArray() : NULL;
  if (o.report_json && !reports) {
    fprintf(stderr, "shardplan-opt: out of memory\n");
    ok = false;
  }
  if (o.split_input_file) {
    int n = sp_mlir_split(text, len, NULL, 0);
    sp_mlir_chunk *chunks = malloc((size_t)n * sizeof *chunks);
    if (!chunks) {
      fprintf(stderr, "shardplan-opt: out of memory\n");
      ok = false;
    } else {
      sp_mlir_split(text, len, chunks, n);
      for (int i = 0; i < n; i++) {
        if (i) sp_strbuf_puts(&out, "// -----\n");
        ok &= process(&o, file, chunks[i].begin, chunks[i].len, chunks[i].first_line, &out,
                      reports);
      }
      free(chunks);
    }
  } else {
    ok = process(&o, file, text, len, 1, &out, reports);
  }

  FILE *dst = o.output ? fopen(o.output, "wb") : stdout;
  if (!dst) {
    fprintf(stderr, "shardplan-opt: cannot write '%s': %s\n", o.output, strerror(errno));
    ok = false;
  } else {
    if (!sp_strbuf_ok(&out)) {
      fprintf(stderr, "shardplan-opt: out of memory\n");
      ok = false;
    } else if (fwrite(sp_strbuf_str(&out), 1, out.len, dst) != out.len || fflush(dst) != 0) {
      fprintf(stderr, "shardplan-opt: write error: %s\n", strerror(errno));
      ok = false;
    }
    if (o.output && fclose(dst) != 0) ok = false;
  }
  if (reports && !write_reports(&o, reports)) ok = false;
  sp_strbuf_free(&out);
  free(text);
  free(o.requests);
  return ok ? 0 : 1;
}
