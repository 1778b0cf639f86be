/*
 * model_gen.h - MLIR generators for benchmark and test models.
 *
 * Writes StableHLO + sdy text, as JAX lowers it, for
 *   - an MLP: `layers` x (dot_general with a hidden x hidden weight, tanh), and
 *   - GPT-style transformer layers: layer norm, attention split by heads (q/k/v projections,
 *     scores, softmax, context, output projection), residual adds, and an MLP block
 *     (hidden -> ffn -> hidden with a tanh-GELU), optionally followed by the backward pass
 *     (activation and weight gradients of every matmul, element-wise derivative chains).
 * Annotations: none (everything open, for the search), data (the input batch on the first mesh
 * axis) or megatron (also q/k/v and the first MLP matmul column-split, the output projection
 * and the second MLP matmul row-split, on the second mesh axis).
 *
 * The text is appended to a caller-owned sp_strbuf; nothing else is allocated.
 */
#ifndef SP_MODEL_GEN_H
#define SP_MODEL_GEN_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/err.h"
#include "ir/strbuf.h"

#define SP_GEN_MAX_AXES 8

typedef enum sp_gen_model { SP_GEN_MLP, SP_GEN_GPT } sp_gen_model;
typedef enum sp_gen_annotate {
  SP_GEN_ANNOTATE_NONE,
  SP_GEN_ANNOTATE_DATA,
  SP_GEN_ANNOTATE_MEGATRON
} sp_gen_annotate;

typedef struct sp_gen_options {
  sp_gen_model model;
  int layers;            /* >= 1 */
  int64_t hidden;        /* model width */
  int64_t heads;         /* GPT: attention heads; hidden % heads == 0 */
  int64_t seq;           /* GPT: sequence length */
  int64_t batch;
  int64_t ffn;           /* GPT: MLP width; 0 means 4 * hidden */
  const char *dtype;     /* element type, e.g. "f32", "bf16" */
  bool backward;         /* also emit the backward pass */
  int naxes;
  char axis_names[SP_GEN_MAX_AXES][32];
  int64_t axis_sizes[SP_GEN_MAX_AXES];
  sp_gen_annotate annotate;
} sp_gen_options;

/* Defaults: GPT, 1 layer, hidden 1024, 16 heads, seq 512, batch 8, f32, mesh data=2,model=4. */
void sp_gen_default_options(sp_gen_options *o);
/* The GPT training step the search benchmark and its tests plan: the defaults, then `layers`
 * layers of hidden 4096, 32 heads, seq 2048, batch 8, bf16, with the backward pass. */
void sp_gen_gpt_training_options(sp_gen_options *o, int layers);
/* Parses "data=2,model=4" into the options' mesh. */
int sp_gen_parse_mesh(const char *spec, sp_gen_options *o, sp_err *err);
/* Checks the options (sizes >= 1, divisibility, annotate needing enough axes). */
int sp_gen_check(const sp_gen_options *o, sp_err *err);
/* Appends the module text to `out`; *num_ops (may be NULL) receives the op count, func and
 * module ops excluded. */
int sp_gen_write(const sp_gen_options *o, sp_strbuf *out, int64_t *num_ops, sp_err *err);
/* Ops emitted per layer with these options (for choosing `layers` from a target op count). */
int64_t sp_gen_ops_per_layer(const sp_gen_options *o);

#endif /* SP_MODEL_GEN_H */
