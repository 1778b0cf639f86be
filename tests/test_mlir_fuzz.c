/*
 * test_mlir_fuzz.c - random-mutation smoke test of the MLIR reader and printer.
 *
 * Seeds are hand-written modules plus, when ../shared is present, the chunks of the Shardy
 * conformance files. Each mutant (bytes flipped, deleted, duplicated, or replaced by MLIR
 * punctuation; deterministic PRNG) must either be rejected with a "file:line:col: ..." message
 * or parse, in which case print -> parse -> print must be a fixed point. Crashes and memory
 * errors show up as test errors (Check's fork mode; run the ASan build for the latter).
 *
 * SP_FUZZ_SCALE=k multiplies the number of mutants and SP_FUZZ_SEED=n changes the PRNG seed,
 * for longer manual runs; the default run takes about a second.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ir/ir.h"
#include "mlir/mlir.h"
#include "test_support.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;

static uint64_t rnd(void) { /* xorshift64* */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717ULL;
}

static size_t mutate(const char *src, size_t n, char *dst, size_t cap) {
  static const char alphabet[] = "<>[]{}(),:=%@#\"?!x-0123456789 \n^*.abz_";
  memcpy(dst, src, n);
  int edits = 1 + (int)(rnd() % 4);
  for (int e = 0; e < edits && n > 0; e++) {
    size_t at = (size_t)(rnd() % n);
    switch (rnd() % 5) {
      case 0: dst[at] = alphabet[rnd() % (sizeof alphabet - 1)]; break;
      case 1: dst[at] = (char)(rnd() & 0xff); break;
      case 2: { /* delete a short range */
        size_t len = 1 + (size_t)(rnd() % 8);
        if (at + len > n) len = n - at;
        memmove(dst + at, dst + at + len, n - at - len);
        n -= len;
        break;
      }
      case 3: { /* duplicate a short range */
        size_t len = 1 + (size_t)(rnd() % 16);
        if (at + len > n) len = n - at;
        if (n + len > cap) break;
        memmove(dst + at + len, dst + at, n - at);
        n += len;
        break;
      }
      default: n = at; break; /* truncate */
    }
  }
  return n;
}

static int check_one(const char *text, size_t n) {
  sp_module *m = NULL, *m2 = NULL;
  sp_err err;
  int rc = sp_mlir_parse(text, n, "fz.mlir", 1, &m, &err);
  if (rc != SP_OK) {
    ck_assert_msg(strncmp(err.msg, "fz.mlir", 7) == 0, "error without position: '%s'", err.msg);
    return 0;
  }
  sp_strbuf a = SP_STRBUF_INIT, b = SP_STRBUF_INIT;
  ck_assert_int_eq(sp_mlir_print(m, &a, &err), SP_OK);
  int rc2 = sp_mlir_parse(a.buf, a.len, "printed", 1, &m2, &err);
  ck_assert_msg(rc2 == SP_OK, "printed text does not parse: %s\n--- input:\n%.*s\n--- printed:\n%s",
                err.msg, (int)n, text, a.buf);
  ck_assert_int_eq(sp_mlir_print(m2, &b, &err), SP_OK);
  ck_assert_msg(strcmp(a.buf, b.buf) == 0, "not a fixed point\n--- first:\n%s\n--- second:\n%s",
                a.buf, b.buf);
  sp_strbuf_free(&a);
  sp_strbuf_free(&b);
  sp_module_free(m);
  sp_module_free(m2);
  return 1;
}

static const char *const seeds[] = {
    "sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
    "func.func @f(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"a\", ?}, {\"b\":(1)2}p1], replicated={\"b\":(2)1}>}) -> (tensor<8x8xf32> {jax.result_info = \"r\"}) {\n"
    "  %c = stablehlo.constant dense<[[1.0, 2.0]]> : tensor<1x2xf32>\n"
    "  %0 = stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{\"a\"}, {}]>]>} : tensor<8x8xf32>\n"
    "  %1 = stablehlo.dot_general %0, %arg0, batching_dims = [0] x [0], contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8xf32>\n"
    "  %2 = stablehlo.custom_call @foo(%0) {backend_config = \"x\\22y\", sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=8} reduction={j}, custom>} : (tensor<8x8xf32>) -> tensor<8x8xf32>\n"
    "  %3 = sdy.sharding_constraint %2 <@mesh, [{?}, {\"b\"}]> : tensor<8x8xf32>\n"
    "  return %3 : tensor<8x8xf32>\n"
    "}\n",
    "func.func @w(%x: tensor<4xi32>, %p: tensor<i32>) -> tensor<4xi32> {\n"
    "  %c = stablehlo.constant dense<1> : tensor<i32>\n"
    "  %w:2 = stablehlo.while(%i = %x, %j = %c) : tensor<4xi32>, tensor<i32>\n"
    "   cond {\n"
    "    %t = stablehlo.compare  LT, %j, %p,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "    stablehlo.return %t : tensor<i1>\n"
    "  } do {\n"
    "    %u = stablehlo.add %i, %i : tensor<4xi32>\n"
    "    stablehlo.return %u, %j : tensor<4xi32>, tensor<i32>\n"
    "  }\n"
    "  %k = \"stablehlo.case\"(%p) ({\n"
    "    stablehlo.return %w#0 : tensor<4xi32>\n"
    "  }, {\n"
    "  ^bb0:\n"
    "    stablehlo.return %x : tensor<4xi32>\n"
    "  }) {mhlo.frontend = {b = [1, 2.5], a}} : (tensor<i32>) -> tensor<4xi32>\n"
    "  %r = stablehlo.reduce(%k init: %c) applies stablehlo.add across dimensions = [0] : (tensor<4xi32>, tensor<i32>) -> tensor<i32>\n"
    "  return %k : tensor<4xi32>\n"
    "}\n",
    "module @m attributes {a = array<i64: 1, 2>, b = dense<[1, 1]> : tensor<2xi8>} {\n"
    "  sdy.mesh @mesh = <[\"x\"=4], device_ids=[3, 2, 1, 0]>\n"
    "  func.func private @decl(tensor<4xf32>) -> tensor<4xf32>\n"
    "  func.func @mc(%a: tensor<16xf32>) -> tensor<16xf32> {\n"
    "    %0 = sdy.manual_computation(%a) in_shardings=[<@mesh, [{\"x\"}]>] out_shardings=[<@mesh, [{\"x\"}]>] manual_axes={\"x\"} (%b: tensor<4xf32>) {\n"
    "      %1 = func.call @decl(%b) : (tensor<4xf32>) -> tensor<4xf32>\n"
    "      sdy.return %1 : tensor<4xf32>\n"
    "    } : (tensor<16xf32>) -> tensor<16xf32>\n"
    "    %2 = \"stablehlo.gather\"(%0, %0) <{dimension_numbers = #stablehlo.gather<offset_dims = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1>}> : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>\n"
    "    return %2 : tensor<16xf32>\n"
    "  }\n"
    "}\n",
};

static void fuzz_seed(const char *seed, size_t n, int iterations, int *accepted) {
  size_t cap = n * 2 + 64;
  char *buf = malloc(cap);
  ck_assert_ptr_nonnull(buf);
  check_one(seed, n);
  for (int it = 0; it < iterations; it++) {
    size_t m = mutate(seed, n, buf, cap);
    *accepted += check_one(buf, m);
  }
  free(buf);
}

START_TEST(mutated_modules_are_rejected_cleanly_or_round_trip) {
  int accepted = 0, tried = 0;
  const char *scale_env = getenv("SP_FUZZ_SCALE"), *seed_env = getenv("SP_FUZZ_SEED");
  int scale = scale_env && atoi(scale_env) > 0 ? atoi(scale_env) : 1;
  if (seed_env) rng_state ^= strtoull(seed_env, NULL, 10) * 0x2545F4914F6CDD1DULL;
  for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
    fuzz_seed(seeds[i], strlen(seeds[i]), 4000 * scale, &accepted);
    tried += 4000 * scale;
  }
  /* The conformance chunks, when available, as further seeds. */
  static const char *files[] = {"basic_propagation.mlir", "basic_propagation_data_flow_edges.mlir",
                                "op_sharding_rule_registry.mlir", "propagation_pipeline.mlir",
                                "sharding_origins.mlir"};
  for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
    char rel[256];
    struct stat st;
    snprintf(rel, sizeof rel, "conformance/shardy/%s", files[f]);
    if (stat(sp_test_shared_path(rel), &st) != 0) continue;
    size_t len;
    char *text = sp_test_read_file(sp_test_shared_path(rel), &len);
    ck_assert_ptr_nonnull(text);
    int n = sp_mlir_split(text, len, NULL, 0);
    sp_mlir_chunk *ch = malloc((size_t)n * sizeof *ch);
    sp_mlir_split(text, len, ch, n);
    for (int k = 0; k < n; k += 3) {
      fuzz_seed(ch[k].begin, ch[k].len, 300 * scale, &accepted);
      tried += 300 * scale;
    }
    free(ch);
    free(text);
  }
  printf("fuzz: %d mutants, %d parsed and round-tripped, the rest rejected with a position\n",
         tried, accepted);
  ck_assert_int_gt(accepted, 0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("mlir_fuzz");
  TCase *tc = tcase_create("mutations");
  tcase_add_test(tc, mutated_modules_are_rejected_cleanly_or_round_trip);
  tcase_set_timeout(tc, 300);
  suite_add_tcase(s, tc);
  return sp_test_run(s);
}
