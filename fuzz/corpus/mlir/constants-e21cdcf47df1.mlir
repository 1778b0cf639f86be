func.func @main(%arg0: tensor<8x8xf32>, %arg1: tensor<f32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {
  %0 = stablehlo.constant dense<1.0> : tensor<8x8xf32>
  %1 = stablehlo.constant dense<2.0> : tensor<8x8xf32>
  %2 = stablehlo.add %0, %1 : tensor<8x8xf32>
  %3 = stablehlo.multiply %2, %arg0 : tensor<8x8xf32>
  %4 = stablehlo.subtract %2, %arg0 : tensor<8x8xf32>
  %5 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<f32>) -> tensor<8x8xf32>
  %6 = stablehlo.add %5, %5 : tensor<8x8xf32>
  %7 = stablehlo.iota dim = 0 : tensor<8x8xf32>
  return %3, %4, %6, %7 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}
