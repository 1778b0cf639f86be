module {
  func.func @r(%arg0: tensor<2x64xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<2x64xf32>, tensor<f32>) -> tensor<2xf32>
    %1 = stablehlo.reduce(%arg0 init: %cst) across dimensions = [1] : (tensor<2x64xf32>, tensor<f32>) -> tensor<2xf32>
     reducer(%arg1: tensor<f32>, %arg2: tensor<f32>)  {
      %3 = stablehlo.multiply %arg2, %arg1 : tensor<f32>
      stablehlo.return %3 : tensor<f32>
    }
    %2 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.maximum across dimensions = [1] : (tensor<2x64xf32>, tensor<f32>) -> tensor<2xf32>
    return %0, %1 : tensor<2xf32>, tensor<2xf32>
  }
}
