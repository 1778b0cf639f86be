module {
  sdy.mesh @mesh = <["a"=2]>
  func.func @main(%arg0: tensor<f32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
    %0 = sdy.constant dense<1.000000e+00> : tensor<8xf32>
    %1 = sdy.constant {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}]>]>} dense<1.000000e+00> : tensor<8xf32>
    %2 = sdy.constant dense<2.000000e+00> : tensor<8xf32>
    %3 = stablehlo.broadcast_in_dim %arg0, dims = [] : (tensor<f32>) -> tensor<8xf32>
    return %0, %0, %1, %2, %3, %3 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
  }
}
