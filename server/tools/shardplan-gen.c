/*
 * shardplan-gen - writes MLIR (StableHLO + sdy) for generated models: an MLP, or GPT-style
 * transformer layers with an optional backward pass, on a given mesh. For benchmarks and for
 * the strategy search's tests.
 *
 *   shardplan-gen --model gpt --layers 2 --hidden 4096 --heads 32 --seq 2048 --batch 8 \
 *                 --dtype bf16 --mesh data=2,model=4 --annotate data [--backward] [-o FILE]
 *   shardplan-gen --model gpt --ops 100000 ...   (picks the layer count for ~N ops)
 *
 * Exit codes: 0 ok, 1 cannot write, 2 bad arguments.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen/model_gen.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: shardplan-gen [options]\n"
          "  --model mlp|gpt        model to generate (default gpt)\n"
          "  --layers N             number of layers (default 1)\n"
          "  --ops N                choose the layer count to get about N ops (overrides --layers)\n"
          "  --hidden N             hidden size (default 1024)\n"
          "  --heads N              attention heads (gpt; default 16)\n"
          "  --seq N                sequence length (gpt; default 512)\n"
          "  --batch N              batch size (default 8)\n"
          "  --ffn N                MLP width (gpt; default 4 * hidden)\n"
          "  --dtype T              element type (default f32), e.g. bf16\n"
          "  --mesh A=N,B=M         mesh axes (default data=2,model=4)\n"
          "  --annotate none|data|megatron\n"
          "                         shardings on the inputs (default none)\n"
          "  --backward             also emit the backward pass\n"
          "  -o FILE                write to FILE instead of stdout\n"
          "  --stats                print the op count to stderr\n");
}

static int parse_count(const char *flag, const char *s, long long min, long long *out) {
  char *end;
  long long v = strtoll(s, &end, 10);
  if (*s == '\0' || *end != '\0' || v < min) {
    fprintf(stderr, "shardplan-gen: %s expects an integer >= %lld, got '%s'\n", flag, min, s);
    return -1;
  }
  *out = v;
  return 0;
}

int main(int argc, char **argv) {
  sp_gen_options o;
  sp_gen_default_options(&o);
  const char *out_path = NULL;
  long long target_ops = 0, v;
  int stats = 0;
  sp_err err;
  enum { O_MODEL = 256, O_LAYERS, O_OPS, O_HIDDEN, O_HEADS, O_SEQ, O_BATCH, O_FFN, O_DTYPE,
         O_MESH, O_ANNOTATE, O_BACKWARD, O_STATS };
  static const struct option longopts[] = {
      {"model", required_argument, 0, O_MODEL},   {"layers", required_argument, 0, O_LAYERS},
      {"ops", required_argument, 0, O_OPS},       {"hidden", required_argument, 0, O_HIDDEN},
      {"heads", required_argument, 0, O_HEADS},   {"seq", required_argument, 0, O_SEQ},
      {"batch", required_argument, 0, O_BATCH},   {"ffn", required_argument, 0, O_FFN},
      {"dtype", required_argument, 0, O_DTYPE},   {"mesh", required_argument, 0, O_MESH},
      {"annotate", required_argument, 0, O_ANNOTATE},
      {"backward", no_argument, 0, O_BACKWARD},   {"stats", no_argument, 0, O_STATS},
      {"help", no_argument, 0, 'h'},              {0, 0, 0, 0}};
  int c;
  while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
    switch (c) {
      case O_MODEL:
        if (strcmp(optarg, "mlp") == 0) o.model = SP_GEN_MLP;
        else if (strcmp(optarg, "gpt") == 0) o.model = SP_GEN_GPT;
        else { fprintf(stderr, "shardplan-gen: unknown model '%s' (mlp or gpt)\n", optarg); return 2; }
        break;
      case O_LAYERS: if (parse_count("--layers", optarg, 1, &v)) return 2; o.layers = (int)v; break;
      case O_OPS: if (parse_count("--ops", optarg, 1, &target_ops)) return 2; break;
      case O_HIDDEN: if (parse_count("--hidden", optarg, 1, &v)) return 2; o.hidden = v; break;
      case O_HEADS: if (parse_count("--heads", optarg, 1, &v)) return 2; o.heads = v; break;
      case O_SEQ: if (parse_count("--seq", optarg, 1, &v)) return 2; o.seq = v; break;
      case O_BATCH: if (parse_count("--batch", optarg, 1, &v)) return 2; o.batch = v; break;
      case O_FFN: if (parse_count("--ffn", optarg, 1, &v)) return 2; o.ffn = v; break;
      case O_DTYPE: o.dtype = optarg; break;
      case O_MESH:
        if (sp_gen_parse_mesh(optarg, &o, &err)) {
          fprintf(stderr, "shardplan-gen: %s\n", err.msg);
          return 2;
        }
        break;
      case O_ANNOTATE:
        if (strcmp(optarg, "none") == 0) o.annotate = SP_GEN_ANNOTATE_NONE;
        else if (strcmp(optarg, "data") == 0) o.annotate = SP_GEN_ANNOTATE_DATA;
        else if (strcmp(optarg, "megatron") == 0) o.annotate = SP_GEN_ANNOTATE_MEGATRON;
        else { fprintf(stderr, "shardplan-gen: unknown annotation '%s'\n", optarg); return 2; }
        break;
      case O_BACKWARD: o.backward = true; break;
      case O_STATS: stats = 1; break;
      case 'o': out_path = optarg; break;
      case 'h': usage(stdout); return 0;
      default: usage(stderr); return 2;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "shardplan-gen: unexpected argument '%s'\n", argv[optind]);
    usage(stderr);
    return 2;
  }
  if (sp_gen_check(&o, &err)) {
    fprintf(stderr, "shardplan-gen: %s\n", err.msg);
    return 2;
  }
  if (target_ops) {
    int64_t per = sp_gen_ops_per_layer(&o);
    long long layers = per > 0 ? (target_ops + per / 2) / per : 1;
    o.layers = layers < 1 ? 1 : (int)layers;
  }
  sp_strbuf sb = SP_STRBUF_INIT;
  int64_t nops = 0;
  if (sp_gen_write(&o, &sb, &nops, &err)) {
    fprintf(stderr, "shardplan-gen: %s\n", err.msg);
    sp_strbuf_free(&sb);
    return 2;
  }
  FILE *f = out_path ? fopen(out_path, "w") : stdout;
  if (!f) {
    perror(out_path);
    sp_strbuf_free(&sb);
    return 1;
  }
  int rc = fwrite(sb.buf, 1, sb.len, f) == sb.len ? 0 : 1;
  if (out_path && fclose(f) != 0) rc = 1;
  if (rc) fprintf(stderr, "shardplan-gen: cannot write %s\n", out_path ? out_path : "stdout");
  if (stats) fprintf(stderr, "shardplan-gen: %d layers, %lld ops\n", o.layers, (long long)nops);
  sp_strbuf_free(&sb);
  return rc;
}
