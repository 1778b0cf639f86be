module {
  func.func @main(%arg0: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
    %0 = sdy.constant dense<3.000000e+00> : tensor<4xf32>
    %1 = stablehlo.add %0, %arg0 : tensor<4xf32>
    %2 = stablehlo.multiply %0, %1 : tensor<4xf32>
    return %1, %2 : tensor<4xf32>, tensor<4xf32>
  }
}
