/*
 * fuzz_mlir.c - libFuzzer target: the MLIR reader, and on what parses the verifier, the
 * propagation pipeline and the search.
 *
 * Invariants checked beyond "no crash, no leak": a rejected input gets an error with a
 * position in fuzz.mlir; an accepted one prints, the printed text parses again and prints the
 * same (the reader and printer agree); every later stage fails only with an error message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "ir/strbuf.h"
#include "mlir/mlir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_round_trip(const sp_module *m) {
  sp_err err;
  sp_strbuf a = SP_STRBUF_INIT, b = SP_STRBUF_INIT;
  sp_module *m2 = NULL;
  sp_fuzz_check(sp_mlir_print(m, &a, &err) == SP_OK, "printing a parsed module", &err);
  int rc = sp_mlir_parse(a.buf, a.len, "printed.mlir", 1, &m2, &err);
  if (rc != SP_OK) {
    fprintf(stderr, "--- printed:\n%s\n", sp_strbuf_str(&a));
    sp_fuzz_check(0, "the printed module does not parse", &err);
  }
  sp_fuzz_check(sp_mlir_print(m2, &b, &err) == SP_OK, "printing the reparsed module", &err);
  if (strcmp(sp_strbuf_str(&a), sp_strbuf_str(&b)) != 0) {
    fprintf(stderr, "--- first:\n%s\n--- second:\n%s\n", sp_strbuf_str(&a), sp_strbuf_str(&b));
    sp_fuzz_check(0, "print-parse-print is not a fixed point", NULL);
  }
  sp_module_free(m2);
  sp_strbuf_free(&a);
  sp_strbuf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sp_module *m = NULL;
  sp_err err;
  int rc = sp_mlir_parse((const char *)data, size, "fuzz.mlir", 1, &m, &err);
  if (rc != SP_OK) {
    sp_fuzz_check_error(rc, &err, "reader failed without an error");
    sp_fuzz_check(m == NULL, "reader failed but returned a module", &err);
    sp_fuzz_check(strncmp(err.msg, "fuzz.mlir", 9) == 0, "reader error without the file name",
                  &err);
    sp_fuzz_count("mlir", SP_FUZZ_REJECTED);
    return 0;
  }
  check_round_trip(m);
  sp_fuzz_count("mlir", sp_fuzz_run_engine(m));
  sp_module_free(m);
  return 0;
}
