module {
  sdy.mesh @mesh = <["a"=2, "b"=2]>
  func.func @main(%arg0: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
    %0 = call @foo(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
    %1 = call @bar_0(%0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}]>]>} : (tensor<8xf32>) -> tensor<8xf32>
    return %0, %1 : tensor<8xf32>, tensor<8xf32>
  }
  func.func private @bar(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    return %arg0 : tensor<8xf32>
  }
  func.func private @foo(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}]>}) -> tensor<8xf32> {
    %0 = stablehlo.negate %arg0 : tensor<8xf32>
    %1 = call @bar(%0) : (tensor<8xf32>) -> tensor<8xf32>
    return %1 : tensor<8xf32>
  }
  func.func private @bar_0(%arg0: tensor<8xf32>) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}]>}) {
    return %arg0 : tensor<8xf32>
  }
}
