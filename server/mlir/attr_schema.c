/*
 * attr_schema.c - the table of structured and inherent attributes (see attr_schema_int.h).
 *
 * Names and kinds follow ir/op_attrs.h; inherent attributes follow StableHLO's op definitions
 * (what MLIR prints inside `<{...}>` for ops without a custom syntax).
 */
#include "mlir/attr_schema_int.h"

#include <string.h>

#define ENT(op, name, form, inh, extra) {SP_OP_##op, name, SP__FORM_##form, inh, extra}

static const sp__mlir_attr_schema schema[] = {
    /* dot_general / dot */
    ENT(DOT_GENERAL, "dot_dimension_numbers", DOT_DIMS, true, NULL),
    ENT(DOT_GENERAL, "lhs_batching_dimensions", SUB, false, "dot_dimension_numbers"),
    ENT(DOT_GENERAL, "rhs_batching_dimensions", SUB, false, "dot_dimension_numbers"),
    ENT(DOT_GENERAL, "lhs_contracting_dimensions", SUB, false, "dot_dimension_numbers"),
    ENT(DOT_GENERAL, "rhs_contracting_dimensions", SUB, false, "dot_dimension_numbers"),
    ENT(DOT_GENERAL, "precision_config", TEXT, true, NULL),
    ENT(DOT_GENERAL, "algorithm", TEXT, true, NULL),
    ENT(DOT, "precision_config", TEXT, true, NULL),
    /* shape ops */
    ENT(BROADCAST_IN_DIM, "broadcast_dimensions", INTS_ARRAY, true, NULL),
    ENT(TRANSPOSE, "permutation", INTS_ARRAY, true, NULL),
    ENT(REDUCE, "dimensions", INTS_ARRAY, true, NULL),
    ENT(REVERSE, "dimensions", INTS_ARRAY, true, NULL),
    ENT(CONCATENATE, "dimension", INT, true, NULL),
    ENT(SORT, "dimension", INT, true, NULL),
    ENT(SORT, "is_stable", BOOL, true, NULL),
    ENT(SLICE, "start_indices", INTS_ARRAY, true, NULL),
    ENT(SLICE, "limit_indices", INTS_ARRAY, true, NULL),
    ENT(SLICE, "strides", INTS_ARRAY, true, NULL),
    ENT(DYNAMIC_SLICE, "slice_sizes", INTS_ARRAY, true, NULL),
    ENT(PAD, "edge_padding_low", INTS_ARRAY, true, NULL),
    ENT(PAD, "edge_padding_high", INTS_ARRAY, true, NULL),
    ENT(PAD, "interior_padding", INTS_ARRAY, true, NULL),
    ENT(IOTA, "iota_dimension", INT, true, NULL),
    ENT(GET_TUPLE_ELEMENT, "index", INT, true, "i32"),
    /* gather / scatter */
    ENT(GATHER, "dimension_numbers", GATHER_DIMS, true, NULL),
    ENT(GATHER, "offset_dims", SUB, false, "dimension_numbers"),
    ENT(GATHER, "collapsed_slice_dims", SUB, false, "dimension_numbers"),
    ENT(GATHER, "operand_batching_dims", SUB, false, "dimension_numbers"),
    ENT(GATHER, "start_indices_batching_dims", SUB, false, "dimension_numbers"),
    ENT(GATHER, "start_index_map", SUB, false, "dimension_numbers"),
    ENT(GATHER, "index_vector_dim", SUB, false, "dimension_numbers"),
    ENT(GATHER, "slice_sizes", INTS_ARRAY, true, NULL),
    ENT(GATHER, "indices_are_sorted", TEXT, true, NULL),
    ENT(SCATTER, "scatter_dimension_numbers", SCATTER_DIMS, true, NULL),
    ENT(SCATTER, "update_window_dims", SUB, false, "scatter_dimension_numbers"),
    ENT(SCATTER, "inserted_window_dims", SUB, false, "scatter_dimension_numbers"),
    ENT(SCATTER, "input_batching_dims", SUB, false, "scatter_dimension_numbers"),
    ENT(SCATTER, "scatter_indices_batching_dims", SUB, false, "scatter_dimension_numbers"),
    ENT(SCATTER, "scatter_dims_to_operand_dims", SUB, false, "scatter_dimension_numbers"),
    ENT(SCATTER, "index_vector_dim", SUB, false, "scatter_dimension_numbers"),
    ENT(SCATTER, "indices_are_sorted", TEXT, true, NULL),
    ENT(SCATTER, "unique_indices", TEXT, true, NULL),
    /* convolution */
    ENT(CONVOLUTION, "dimension_numbers", CONV_DIMS, true, NULL),
    ENT(CONVOLUTION, "input_batch_dimension", SUB, false, "dimension_numbers"),
    ENT(CONVOLUTION, "input_feature_dimension", SUB, false, "dimension_numbers"),
    ENT(CONVOLUTION, "input_spatial_dimensions", SUB, false, "dimension_numbers"),
    ENT(CONVOLUTION, "kernel_input_feature_dimension", SUB, false, "dimension_numbers"),
    ENT(CONVOLUTION, "kernel_output_feature_dimension", SUB, false, "dimension_numbers"),
    ENT(CONVOLUTION, "kernel_spatial_dimensions", SUB, false, "dimension_numbers"),
    ENT(CONVOLUTION, "output_batch_dimension", SUB, false, "dimension_numbers"),
    ENT(CONVOLUTION, "output_feature_dimension", SUB, false, "dimension_numbers"),
    ENT(CONVOLUTION, "output_spatial_dimensions", SUB, false, "dimension_numbers"),
    ENT(CONVOLUTION, "window_strides", INTS_ARRAY, true, NULL),
    ENT(CONVOLUTION, "lhs_dilation", INTS_ARRAY, true, NULL),
    ENT(CONVOLUTION, "rhs_dilation", INTS_ARRAY, true, NULL),
    ENT(CONVOLUTION, "padding", INTS_PAIRS, true, NULL),
    ENT(CONVOLUTION, "window_reversal", TEXT, true, NULL),
    ENT(CONVOLUTION, "feature_group_count", INT, true, NULL),
    ENT(CONVOLUTION, "batch_group_count", INT, true, NULL),
    ENT(CONVOLUTION, "precision_config", TEXT, true, NULL),
    /* fft, compare, rng */
    ENT(FFT, "fft_type", ENUM, true, "#stablehlo<fft_type"),
    ENT(FFT, "fft_length", INTS_ARRAY, true, NULL),
    ENT(COMPARE, "comparison_direction", ENUM, true, "#stablehlo<comparison_direction"),
    ENT(COMPARE, "compare_type", TEXT, true, NULL),
    ENT(RNG_BIT_GENERATOR, "rng_algorithm", TEXT, true, NULL),
    ENT(CHOLESKY, "lower", BOOL, true, NULL),
    ENT(REDUCE_PRECISION, "exponent_bits", INT, true, "i32"),
    ENT(REDUCE_PRECISION, "mantissa_bits", INT, true, "i32"),
    /* windows */
    ENT(REDUCE_WINDOW, "window_dimensions", INTS_ARRAY, true, NULL),
    ENT(REDUCE_WINDOW, "window_strides", INTS_ARRAY, true, NULL),
    ENT(REDUCE_WINDOW, "base_dilations", INTS_ARRAY, true, NULL),
    ENT(REDUCE_WINDOW, "window_dilations", INTS_ARRAY, true, NULL),
    ENT(REDUCE_WINDOW, "padding", INTS_PAIRS, true, NULL),
    ENT(SELECT_AND_SCATTER, "window_dimensions", INTS_ARRAY, true, NULL),
    ENT(SELECT_AND_SCATTER, "window_strides", INTS_ARRAY, true, NULL),
    ENT(SELECT_AND_SCATTER, "padding", INTS_PAIRS, true, NULL),
    /* custom_call */
    ENT(CUSTOM_CALL, "call_target_name", STR, true, NULL),
    ENT(CUSTOM_CALL, "has_side_effect", BOOL, true, NULL),
    /* collectives */
    ENT(ALL_GATHER, "all_gather_dim", INT, true, NULL),
    ENT(ALL_GATHER, "replica_groups", TEXT, true, NULL),
    ENT(ALL_GATHER, "channel_handle", TEXT, true, NULL),
    ENT(ALL_GATHER, "use_global_device_ids", TEXT, true, NULL),
    ENT(ALL_TO_ALL, "split_dimension", INT, true, NULL),
    ENT(ALL_TO_ALL, "concat_dimension", INT, true, NULL),
    ENT(ALL_TO_ALL, "split_count", INT, true, NULL),
    ENT(ALL_TO_ALL, "replica_groups", TEXT, true, NULL),
    ENT(ALL_TO_ALL, "channel_handle", TEXT, true, NULL),
    ENT(ALL_REDUCE, "replica_groups", TEXT, true, NULL),
    ENT(ALL_REDUCE, "channel_handle", TEXT, true, NULL),
    ENT(ALL_REDUCE, "use_global_device_ids", TEXT, true, NULL),
    ENT(REDUCE_SCATTER, "scatter_dimension", INT, true, NULL),
    ENT(REDUCE_SCATTER, "replica_groups", TEXT, true, NULL),
    ENT(REDUCE_SCATTER, "channel_handle", TEXT, true, NULL),
    ENT(REDUCE_SCATTER, "use_global_device_ids", TEXT, true, NULL),
    ENT(COLLECTIVE_PERMUTE, "source_target_pairs", TEXT, true, NULL),
    ENT(COLLECTIVE_PERMUTE, "channel_handle", TEXT, true, NULL),
    ENT(COLLECTIVE_BROADCAST, "replica_groups", TEXT, true, NULL),
    ENT(COLLECTIVE_BROADCAST, "channel_handle", TEXT, true, NULL),
    /* misc generic-form ops */
    ENT(BATCH_NORM_INFERENCE, "epsilon", TEXT, true, NULL),
    ENT(BATCH_NORM_INFERENCE, "feature_index", INT, true, NULL),
    ENT(BATCH_NORM_TRAINING, "epsilon", TEXT, true, NULL),
    ENT(BATCH_NORM_TRAINING, "feature_index", INT, true, NULL),
    ENT(BATCH_NORM_GRAD, "epsilon", TEXT, true, NULL),
    ENT(BATCH_NORM_GRAD, "feature_index", INT, true, NULL),
    ENT(TRIANGULAR_SOLVE, "left_side", TEXT, true, NULL),
    ENT(TRIANGULAR_SOLVE, "lower", TEXT, true, NULL),
    ENT(TRIANGULAR_SOLVE, "unit_diagonal", TEXT, true, NULL),
    ENT(TRIANGULAR_SOLVE, "transpose_a", TEXT, true, NULL),
    ENT(SEND, "channel_handle", TEXT, true, NULL),
    ENT(SEND, "is_host_transfer", TEXT, true, NULL),
    ENT(SEND, "source_target_pairs", TEXT, true, NULL),
    ENT(RECV, "channel_handle", TEXT, true, NULL),
    ENT(RECV, "is_host_transfer", TEXT, true, NULL),
    ENT(RECV, "source_target_pairs", TEXT, true, NULL),
    ENT(INFEED, "infeed_config", TEXT, true, NULL),
    ENT(INFEED, "layout", TEXT, true, NULL),
    ENT(OUTFEED, "outfeed_config", TEXT, true, NULL),
    ENT(CONSTANT, "value", TEXT, true, NULL),
    /* func / sdy */
    ENT(FUNC_CALL, "callee", SYMBOL, true, NULL),
    ENT(FUNC, "sdy.original_func_name", STR, false, NULL),
    ENT(SDY_PROPAGATION_BARRIER, "allowed_direction", ENUM, true, "#sdy<propagation_direction"),
    ENT(SDY_SHARDING_GROUP, "group_id", INT, true, NULL),
    ENT(SDY_NAMED_COMPUTATION, "name", STR, true, NULL),
    ENT(SDY_CONSTANT, "value", TEXT, true, NULL),
};

const sp__mlir_attr_schema *sp__mlir_schema_find(sp_op_kind kind, const char *name) {
  for (size_t i = 0; i < sizeof schema / sizeof schema[0]; i++)
    if (schema[i].op == kind && strcmp(schema[i].name, name) == 0) return &schema[i];
  return NULL;
}

int sp__mlir_schema_parts(sp__mlir_attr_form form, const char **names, bool *is_int) {
  static const char *const gather[] = {"offset_dims", "collapsed_slice_dims", "operand_batching_dims",
                                 "start_indices_batching_dims", "start_index_map",
                                 "index_vector_dim"};
  static const char *const scatter[] = {"update_window_dims", "inserted_window_dims",
                                  "input_batching_dims", "scatter_indices_batching_dims",
                                  "scatter_dims_to_operand_dims", "index_vector_dim"};
  static const char *const dot[] = {"lhs_batching_dimensions", "rhs_batching_dimensions",
                              "lhs_contracting_dimensions", "rhs_contracting_dimensions"};
  const char *const *src;
  int n;
  switch (form) {
    case SP__FORM_GATHER_DIMS: src = gather; n = 6; break;
    case SP__FORM_SCATTER_DIMS: src = scatter; n = 6; break;
    case SP__FORM_DOT_DIMS: src = dot; n = 4; break;
    default: return 0;
  }
  for (int i = 0; i < n; i++) {
    names[i] = src[i];
    is_int[i] = strcmp(src[i], "index_vector_dim") == 0;
  }
  return n;
}
