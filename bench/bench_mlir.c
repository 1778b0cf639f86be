/*
 * bench_mlir.c - speed and memory of the MLIR text front-end on a large module.
 *
 * Generates the text of one function of N ops (default 100,000): a stack of MLP layers as JAX
 * prints them (dot_general with precision, broadcast_in_dim, add, constant, maximum, a
 * sharding constraint per layer, explicit sdy.sharding on some ops), then times
 * sp_mlir_parse() and sp_mlir_print() separately (best of R runs, default 3) and reports
 * ns/op, MB/s and the arena bytes of the parsed module. The printed text is parsed again to
 * check that it is a fixed point, so the figures are for correct output.
 *
 * Usage: bench_mlir [N] [R]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir/clock.h"
#include "ir/ir.h"
#include "mlir/mlir.h"

/* One layer is 8 ops; `%h` is the layer input, numbered from `v`. Returns the next number. */
static int emit_layer(sp_strbuf *sb, int v, int layer) {
  const char *T = "tensor<64x512xf32>";
  int h = v - 1;
  sp_strbuf_printf(sb,
                   "  %%%d = stablehlo.dot_general %%%d, %%w, contracting_dims = [1] x [0], "
                   "precision = [DEFAULT, DEFAULT] : (%s, tensor<512x512xf32>) -> %s\n",
                   v, h, T, T);
  sp_strbuf_printf(sb, "  %%%d = stablehlo.broadcast_in_dim %%b, dims = [1] : (tensor<512xf32>) -> %s\n",
                   v + 1, T);
  sp_strbuf_printf(sb,
                   "  %%%d = stablehlo.add %%%d, %%%d {sdy.sharding = #sdy.sharding_per_value<[<@mesh, "
                   "[{\"data\", ?}, {\"model\", ?}]>]>} : %s\n",
                   v + 2, v, v + 1, T);
  sp_strbuf_printf(sb, "  %%c%d = stablehlo.constant dense<0.000000e+00> : tensor<f32>\n", layer);
  sp_strbuf_printf(sb, "  %%%d = stablehlo.broadcast_in_dim %%c%d, dims = [] : (tensor<f32>) -> %s\n",
                   v + 3, layer, T);
  sp_strbuf_printf(sb, "  %%%d = stablehlo.maximum %%%d, %%%d : %s\n", v + 4, v + 2, v + 3, T);
  sp_strbuf_printf(sb, "  %%%d = sdy.sharding_constraint %%%d <@mesh, [{\"data\"}, {}]> : %s\n", v + 5,
                   v + 4, T);
  sp_strbuf_printf(sb, "  %%%d = stablehlo.tanh %%%d : %s\n", v + 6, v + 5, T);
  return v + 7;
}

static char *make_module(int nops, size_t *len) {
  sp_strbuf sb = SP_STRBUF_INIT;
  sp_strbuf_puts(&sb,
                 "sdy.mesh @mesh = <[\"data\"=4, \"model\"=2]>\n"
                 "func.func @main(%0: tensor<64x512xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"data\"}, {}]>},\n"
                 "                %w: tensor<512x512xf32>, %b: tensor<512xf32>) -> tensor<64x512xf32> {\n");
  int v = 1, layers = nops / 8 > 0 ? nops / 8 : 1;
  for (int l = 0; l < layers; l++) v = emit_layer(&sb, v, l);
  sp_strbuf_printf(&sb, "  return %%%d : tensor<64x512xf32>\n}\n", v - 1);
  *len = sb.len;
  return sp_strbuf_detach(&sb);
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 100000;
  int runs = argc > 2 ? atoi(argv[2]) : 3;
  if (n < 8 || runs < 1) {
    fprintf(stderr, "usage: bench_mlir [N>=8] [runs>=1]\n");
    return 2;
  }
  size_t len;
  char *text = make_module(n, &len);
  if (!text) return 1;
  double best_parse = 1e30, best_print = 1e30;
  size_t arena = 0, out_len = 0;
  int64_t ops = 0;
  for (int r = 0; r < runs; r++) {
    sp_module *m = NULL;
    sp_err err;
    double t0 = 1e3 * sp_clock_now();
    if (sp_mlir_parse(text, len, "bench.mlir", 1, &m, &err) != SP_OK) {
      fprintf(stderr, "bench_mlir: %s\n", err.msg);
      return 1;
    }
    double t1 = 1e3 * sp_clock_now();
    sp_strbuf out = SP_STRBUF_INIT;
    if (sp_mlir_print(m, &out, &err) != SP_OK) {
      fprintf(stderr, "bench_mlir: %s\n", err.msg);
      return 1;
    }
    double t2 = 1e3 * sp_clock_now();
    if (t1 - t0 < best_parse) best_parse = t1 - t0;
    if (t2 - t1 < best_print) best_print = t2 - t1;
    arena = sp_arena_bytes(m->arena);
    ops = sp_module_num_ops(m);
    out_len = out.len;
    if (r == 0) { /* the printed text must read back to itself */
      sp_module *m2 = NULL;
      sp_strbuf again = SP_STRBUF_INIT;
      if (sp_mlir_parse(out.buf, out.len, "printed", 1, &m2, &err) != SP_OK ||
          sp_mlir_print(m2, &again, &err) != SP_OK || strcmp(out.buf, again.buf) != 0) {
        fprintf(stderr, "bench_mlir: printed text is not a fixed point\n");
        return 1;
      }
      sp_strbuf_free(&again);
      sp_module_free(m2);
    }
    sp_strbuf_free(&out);
    sp_module_free(m);
  }
  printf("bench_mlir: ops=%lld input=%.1f MB output=%.1f MB\n", (long long)ops, len / 1e6,
         out_len / 1e6);
  printf("  parse  %8.1f ms  %6.0f ns/op  %6.1f MB/s\n", best_parse, best_parse * 1e6 / (double)ops,
         len / 1e3 / best_parse);
  printf("  print  %8.1f ms  %6.0f ns/op  %6.1f MB/s\n", best_print, best_print * 1e6 / (double)ops,
         out_len / 1e3 / best_print);
  printf("  total  %8.1f ms   arena %.1f MB (%.0f bytes/op)\n", best_parse + best_print,
         arena / 1e6, (double)arena / (double)ops);
  free(text);
  return 0;
}
