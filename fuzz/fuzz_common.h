/*
 * fuzz_common.h - what the libFuzzer targets of fuzz/ share: the engine run on a module that
 * parsed (verify, propagation pipeline, cost search on a fixed cluster) and the counters of
 * how far inputs get.
 *
 * Each target defines LLVMFuzzerTestOneInput (and may define LLVMFuzzerInitialize). Built with
 * clang -fsanitize=fuzzer they are libFuzzer binaries; built with the project's compiler and
 * fuzz/replay_main.c they replay files (the regression inputs and seed corpora), which is how
 * the normal build tests every crash found stays fixed.
 *
 * The checks a target makes beyond "no crash" (an accepted module prints and reparses, an error
 * carries a message) abort() on failure, which libFuzzer and the replay driver both report.
 *
 * Memory: nothing here outlives one input, except the fixed cluster (parsed once) and the
 * counters.
 */
#ifndef SP_FUZZ_COMMON_H
#define SP_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "ir/err.h"
#include "ir/ir.h"

/* How far one input got; the counters add these up over a run. */
typedef enum sp_fuzz_stage {
  SP_FUZZ_REJECTED = 0,   /* the reader rejected it */
  SP_FUZZ_PARSED,         /* parsed, the verifier rejected it */
  SP_FUZZ_VERIFIED,       /* verified, propagation rejected it */
  SP_FUZZ_PROPAGATED,     /* propagated (pipeline ran), no search (no mesh, too big, error) */
  SP_FUZZ_SEARCHED,       /* the search planned it */
  SP_FUZZ_NSTAGES
} sp_fuzz_stage;

/* Largest module (ops, nested included) the search is run on, the solver's work limit
 * (heuristic work units; the search has no time limit, so the same input takes the same path
 * on any machine) and the strategies kept per node (the solver's exact reduction, which no
 * limit bounds, folds chains of nodes at the product of their counts): keeps one input well
 * under a second. */
#define SP_FUZZ_SEARCH_MAX_OPS 96
#define SP_FUZZ_SEARCH_WORK 20000
#define SP_FUZZ_SEARCH_STRATEGIES 64

/* Aborts with `what` and the error's message when `cond` is false. */
void sp_fuzz_check(int cond, const char *what, const sp_err *err);

/* An error must have a status and a non-empty message. */
void sp_fuzz_check_error(int rc, const sp_err *err, const char *what);

/* `m` prints, the printed text parses, and prints the same (print-parse-print is a fixed
 * point); `what` names the module in the dump made on failure. */
void sp_fuzz_check_reparses(const sp_module *m, const char *what);

/* The fixed cluster the searches plan on: eight machines of eight GPUs (parsed once). */
const struct sp_cluster *sp_fuzz_cluster(void);

/* Verifies `m`; when it verifies, runs the propagation pipeline and, when it propagates and
 * is small enough, the search on an 8-device cluster. Returns the stage reached. `m` is
 * changed by the passes. */
sp_fuzz_stage sp_fuzz_run_engine(sp_module *m);

/* Parses `data` as MLIR and runs the engine; SP_FUZZ_REJECTED when it does not parse. */
sp_fuzz_stage sp_fuzz_run_mlir(const uint8_t *data, size_t size);

/* Counts one input reaching `stage` and, every `SP_FUZZ_REPORT_EVERY` inputs (and at exit),
 * prints the shares per stage to stderr when SP_FUZZ_STATS is set in the environment. */
#define SP_FUZZ_REPORT_EVERY 20000
void sp_fuzz_count(const char *target, sp_fuzz_stage stage);
/* Names the stages in that report for a target whose stages mean other things (default:
 * rejected, parsed, verified, propagated, searched). `names` must outlive the run. */
void sp_fuzz_count_names(const char *const names[SP_FUZZ_NSTAGES]);
/* Marks the end of libFuzzer's replay of the seed corpus (the structure-aware mutator calls it
 * when libFuzzer first asks it for an input): from then on the report also gives the shares of
 * the inputs the fuzzing loop made ("after the seeds"), which is what the mutator achieves, not
 * what the corpus already held. */
void sp_fuzz_seeds_done(void);

#endif /* SP_FUZZ_COMMON_H */
