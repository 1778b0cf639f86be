func.func @f(%a: tensor<4x8x32xf32>, %b: tensor<4x32x16xf32>) -> tensor<4x8x16xf32> {
  %0 = "stablehlo.dot_general"(%a, %b) {dot_dimension_numbers = #stablehlo.dot<
     lhs_batching_dimensions = [0], rhs_batching_dimensions = [0],
     lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>,
     precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision ¸¶¸­>]} : (tensor<4x8x32xf32>, tensor<4x32x16xf32>) -> tensor<4x8x16xf32>
  return %0 : tensor<4x8x16xf32>
}
