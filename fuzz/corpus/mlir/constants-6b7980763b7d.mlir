module {
  func.func @main(%arg0: tensor<8x8xf32>, %arg1: tensor<f32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {
    %0 = sdy.constant dense<1.000000e+00> : tensor<8x8xf32>
    %1 = sdy.constant dense<2.000000e+00> : tensor<8x8xf32>
    %2 = stablehlo.add %0, %1 : tensor<8x8xf32>
    %3 = sdy.constant dense<1.000000e+00> : tensor<8x8xf32>
    %4 = sdy.constant dense<2.000000e+00> : tensor<8x8xf32>
    %5 = stablehlo.add %3, %4 : tensor<8x8xf32>
    %6 = stablehlo.multiply %2, %arg0 : tensor<8x8xf32>
    %7 = stablehlo.subtract %5, %arg0 : tensor<8x8xf32>
    %8 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<f32>) -> tensor<8x8xf32>
    %9 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<f32>) -> tensor<8x8xf32>
    %10 = stablehlo.add %8, %9 : tensor<8x8xf32>
    %11 = stablehlo.iota dim = 0 : tensor<8x8xf32>
    return %6, %7, %10, %11 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
  }
}
