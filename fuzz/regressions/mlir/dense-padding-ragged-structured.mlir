func.func @f(%a: tensor<8x16xf32>, %z: tensor<f32>) -> tensor<4x16xf32> {
  %0 = "stablehlo.reduce_window"(%a, %z) ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %m = stablehlo.maximum %x, %y : tensor<f32>
      stablehlo.return %m : tensor<f32>
  }) {window_dimensions = array<i64: 2, 3>, window_strides = array<i64: 2, 1>, padding = dense<[[0, 0, 1], [1]]> : tensor<2x2xi64>} : (tensor<8x16xf32>, tensor<f32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}
