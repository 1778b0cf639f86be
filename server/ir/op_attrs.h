/*
 * op_attrs.h - the names and kinds of the structured attributes of each op.
 *
 * The readers (MLIR text, proto) store what a sharding rule or a pass needs under these names,
 * whatever syntax it came in (pretty `contracting_dims = [1] x [0]` or generic
 * `dot_dimension_numbers = #stablehlo.dot<...>`); the printers read them back. Everything not
 * listed stays verbatim text under its own name.
 *
 *  op                          name                              kind
 *  --------------------------  --------------------------------  -------------------------
 *  dot_general                 lhs_batching_dimensions           INTS
 *                              rhs_batching_dimensions           INTS
 *                              lhs_contracting_dimensions        INTS
 *                              rhs_contracting_dimensions        INTS
 *  broadcast_in_dim            broadcast_dimensions              INTS
 *  transpose                   permutation                       INTS
 *  reduce, reverse             dimensions                        INTS
 *  concatenate                 dimension                         INT
 *  sort                        dimension                         INT   (is_stable BOOL)
 *  slice                       start_indices, limit_indices, strides   INTS
 *  dynamic_slice               slice_sizes                       INTS
 *  pad                         edge_padding_low, edge_padding_high, interior_padding  INTS
 *  gather                      offset_dims, collapsed_slice_dims, operand_batching_dims,
 *                              start_indices_batching_dims, start_index_map, slice_sizes INTS
 *                              index_vector_dim                  INT
 *  scatter                     update_window_dims, inserted_window_dims, input_batching_dims,
 *                              scatter_indices_batching_dims, scatter_dims_to_operand_dims INTS
 *                              index_vector_dim                  INT
 *  convolution                 input_batch_dimension, input_feature_dimension,
 *                              kernel_input_feature_dimension, kernel_output_feature_dimension,
 *                              output_batch_dimension, output_feature_dimension   INT
 *                              input_spatial_dimensions, kernel_spatial_dimensions,
 *                              output_spatial_dimensions, window_strides, lhs_dilation,
 *                              rhs_dilation                      INTS
 *                              padding                           INTS (lo0, hi0, lo1, hi1, ...)
 *                              feature_group_count, batch_group_count  INT
 *  fft                         fft_type                          ENUM (FFT, IFFT, RFFT, IRFFT)
 *                              fft_length                        INTS
 *  reduce_window               window_dimensions, window_strides, base_dilations,
 *                              window_dilations                  INTS
 *                              padding                           INTS (lo0, hi0, ...)
 *  select_and_scatter          window_dimensions, window_strides INTS, padding INTS (lo, hi...)
 *  custom_call                 call_target_name                  STR
 *                              has_side_effect                   BOOL
 *  all_gather                  all_gather_dim                    INT
 *  all_to_all                  split_dimension, concat_dimension, split_count  INT
 *  reduce_scatter              scatter_dimension                 INT
 *  compare                     comparison_direction              ENUM (EQ, NE, LT, ...)
 *  iota                        iota_dimension                    INT
 *  batch_norm_*                feature_index                     INT
 *  func.func                   sym_name                          STR
 *                              sym_visibility                    STR (absent = public)
 *  func.call                   callee                            SYMBOL
 *  sdy.mesh                    sym_name STR, mesh MESH
 *  sdy.propagation_barrier     allowed_direction                 ENUM (FORWARD, BACKWARD, NONE)
 *  sdy.manual_computation      in_shardings SHARDINGS, manual_axes AXES
 *                              (out_shardings are the results' shardings)
 *  sdy.named_computation       name STR, in_shardings SHARDINGS (out: results' shardings)
 *  sdy.sharding_group          group_id                          INT
 *  sdy.all_reduce              reduction_axes                    AXES
 *                              reduction_kind                    ENUM (max, min; absent = sum)
 *  sdy.reduce_scatter          reduce_scatter_axes DIM_AXES, reduction_kind ENUM
 *  sdy.all_gather              gathering_axes                    DIM_AXES
 *  sdy.all_slice               slicing_axes                      DIM_AXES
 *  sdy.all_to_all              params                            ALL_TO_ALL
 *  sdy.sharded_to_unreduced    axes                              DIM_AXES
 *  sdy.replicated_to_unreduced axes                              AXES
 *  (sdy collectives: out_sharding is the result's sharding)
 *  any op                      sdy.sharding_rule                 RULE
 */
#ifndef SP_OP_ATTRS_H
#define SP_OP_ATTRS_H

#define SP_ATTR_SHARDING_RULE "sdy.sharding_rule"

#endif /* SP_OP_ATTRS_H */
