/*
 * fuzz_mlir_struct.c - libFuzzer target with a structure-aware MLIR mutator (mlir_mutator.h),
 * so that inputs get past the reader into propagation and the search.
 *
 * LLVMFuzzerTestOneInput runs the engine (fuzz_common.h) and, with SP_FUZZ_STATS=1 in the
 * environment, reports the share of inputs that reach each stage.
 */
#include "fuzz_common.h"
#include "mlir_mutator.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sp_fuzz_count("mlir_struct", sp_fuzz_run_mlir(data, size));
  return 0;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
  return sp_fuzz_mlir_mutate(data, size, max_size, seed);
}
