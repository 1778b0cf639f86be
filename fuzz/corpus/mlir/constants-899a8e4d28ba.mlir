func.func @main(%arg0: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = stablehlo.constant dense<3.0> : tensor<4xf32>
  %1 = stablehlo.add %0, %arg0 : tensor<4xf32>
  %2 = stablehlo.multiply %0, %1 : tensor<4xf32>
  return %1, %2 : tensor<4xf32>, tensor<4xf32>
}
