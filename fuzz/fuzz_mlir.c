/*
 * fuzz_mlir.c - libFuzzer target: the MLIR reader, and on what parses the verifier, the
 * propagation pipeline and the search.
 *
 * Invariants checked beyond "no crash, no leak": a rejected input gets an error with a
 * position in fuzz.mlir; an accepted one prints, the printed text parses again and prints the
 * same (the reader and printer agree); every later stage fails only with an error message.
 */
#include <string.h>

#include "fuzz_common.h"
#include "mlir/mlir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
  sp_fuzz_check_reparses(m, "parsed");
  sp_fuzz_count("mlir", sp_fuzz_run_engine(m));
  sp_module_free(m);
  return 0;
}
