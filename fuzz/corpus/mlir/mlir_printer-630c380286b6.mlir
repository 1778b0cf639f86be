func.func @g(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %0 = "stablehlo.dot_general"(%a, %b) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %1 = "stablehlo.abs"(%0) : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %2 = "stablehlo.transpose"(%1) <{permutation = array<i64: 1, 0>}> : (tensor<8x4xf32>) -> tensor<4x8xf32>
  %3 = "stablehlo.custom_call"(%2) {call_target_name = "foo", has_side_effect = true, backend_config = ""} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = "stablehlo.compare"(%3, %3) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
  %5 = "stablehlo.broadcast_in_dim"(%1) {broadcast_dimensions = dense<[1, 2]> : tensor<2xi64>} : (tensor<8x4xf32>) -> tensor<2x8x4xf32>
  %6 = "stablehlo.constant"() {value = dense<[1.0, 1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  "func.return"(%0) : (tensor<8x4xf32>) -> ()
}
