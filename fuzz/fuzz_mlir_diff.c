/*
 * fuzz_mlir_diff.c - differential libFuzzer target: the printer and the reader against each
 * other, and propagation on a module against propagation on its printed text.
 *
 * Inputs come from the structure-aware mutator (mlir_mutator.h: generated and mutated valid
 * modules). For an input that parses:
 *   1. print -> parse -> print is a fixed point (text1 == text2);
 *   2. the module verifies exactly when its reparsed copy does (same message);
 *   3. when it verifies, the propagation pipeline gives the same result on both (the printed
 *      modules after propagation are equal, or both fail with the same message).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "ir/strbuf.h"
#include "ir/verify.h"
#include "mlir/mlir.h"
#include "mlir_mutator.h"
#include "propagation/pipeline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
  return sp_fuzz_mlir_mutate(data, size, max_size, seed);
}

static char *print_module(const sp_module *m) {
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_err err;
  sp_fuzz_check(sp_mlir_print(m, &sb, &err) == SP_OK && !sb.oom, "printing", &err);
  char *s = strdup(sp_strbuf_str(&sb));
  sp_fuzz_check(s != NULL, "strdup", NULL);
  sp_strbuf_free(&sb);
  return s;
}

static void differ(const char *what, const char *a, const char *b) {
  fprintf(stderr, "--- original:\n%s\n--- printed and reparsed:\n%s\n", a, b);
  sp_fuzz_check(0, what, NULL);
}

/* Runs the pipeline; returns the printed result, or "error: message". */
static char *propagate(sp_module *m) {
  sp_pipeline_options po;
  sp_err err;
  sp_fuzz_check(sp_pipeline_parse_options(NULL, &po, &err) == SP_OK, "options", &err);
  int rc = sp_pipeline_run(m, &po, &err);
  if (rc != SP_OK) {
    sp_fuzz_check_error(rc, &err, "pipeline failed without an error");
    size_t n = strlen(err.msg) + 8;
    char *s = malloc(n);
    sp_fuzz_check(s != NULL, "malloc", NULL);
    snprintf(s, n, "error: %s", err.msg);
    return s;
  }
  return print_module(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sp_module *m = NULL, *m2 = NULL;
  sp_err err, err2;
  if (sp_mlir_parse((const char *)data, size, "fuzz.mlir", 1, &m, &err) != SP_OK) {
    sp_fuzz_count("mlir_diff", SP_FUZZ_REJECTED);
    return 0;
  }
  char *text1 = print_module(m);
  int rc = sp_mlir_parse(text1, strlen(text1), "fuzz.mlir", 1, &m2, &err2);
  if (rc != SP_OK) {
    fprintf(stderr, "--- printed:\n%s\n", text1);
    sp_fuzz_check(0, "the printed module does not parse", &err2);
  }
  char *text2 = print_module(m2);
  if (strcmp(text1, text2) != 0) differ("print-parse-print is not a fixed point", text1, text2);
  /* Positions differ between the input and its printed form: compare the status and the
   * message after the position. */
  int v1 = sp_verify_module(m, &err), v2 = sp_verify_module(m2, &err2);
  if (v1 != v2) differ("the verifier disagrees on the printed module", err.msg, err2.msg);
  sp_fuzz_stage stage = SP_FUZZ_PARSED;
  if (v1 == SP_OK) {
    stage = SP_FUZZ_VERIFIED;
    char *p1 = propagate(m), *p2 = propagate(m2);
    if (strncmp(p1, "error: ", 7) != 0) stage = SP_FUZZ_PROPAGATED;
    if ((strncmp(p1, "error: ", 7) == 0) != (strncmp(p2, "error: ", 7) == 0) ||
        (strncmp(p1, "error: ", 7) != 0 && strcmp(p1, p2) != 0))
      differ("propagation differs on the printed module", p1, p2);
    free(p1);
    free(p2);
  }
  sp_fuzz_count("mlir_diff", stage);
  free(text1);
  free(text2);
  sp_module_free(m);
  sp_module_free(m2);
  return 0;
}
