/*
 * mlir_mutator.h - a structure-aware mutator for MLIR modules, for libFuzzer's
 * LLVMFuzzerCustomMutator.
 *
 * sp_fuzz_mlir_mutate parses the input; when it parses, it applies one to three
 * mutations to the IR and prints the module back:
 *   - a value (function argument, op result, function result) gets a new random sharding over
 *     the module's mesh (axes unused in the tensor, open or closed dims, priorities,
 *     replicated axes) or loses its sharding;
 *   - a mesh axis changes size (device ids dropped) or a new axis is added;
 *   - a dimension size changes in every tensor type of the module at once (shapes stay
 *     consistent between ops);
 *   - an element-wise op changes kind (add <-> multiply <-> maximum ..., tanh <-> exp ...);
 *   - an operand is rerouted to an earlier value of the same type;
 *   - a one-result op whose result has its operand's type is removed (uses rerouted);
 *   - a sharding_constraint with a random sharding is inserted after a value.
 * An input that does not parse is replaced, most of the time, by a module freshly generated
 * by server/gen (a small MLP or GPT layer on a random mesh); otherwise libFuzzer's byte
 * mutator works on it, so the syntax keeps being explored too.
 *
 * The mutated module is written into `data` (at most `max_size` bytes) and its length
 * returned; `seed` makes the choice deterministic. libFuzzer's LLVMFuzzerMutate is used when
 * it is linked in (a weak reference), else the generator alone.
 *
 * Memory: the parsed module lives only for the call.
 */
#ifndef SP_FUZZ_MLIR_MUTATOR_H
#define SP_FUZZ_MLIR_MUTATOR_H

#include <stddef.h>
#include <stdint.h>

size_t sp_fuzz_mlir_mutate(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

#endif /* SP_FUZZ_MLIR_MUTATOR_H */
