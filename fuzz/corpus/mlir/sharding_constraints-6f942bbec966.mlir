module {
  sdy.mesh @mesh = <["a"=2, "b"=2]>
  func.func @main(%arg0: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
    %0 = stablehlo.add %arg0, %arg0 : tensor<8x8xf32>
    %1 = stablehlo.negate %0 : tensor<8x8xf32>
    %2 = sdy.sharding_constraint %0 <@mesh, [{"a"}, {?}]> : tensor<8x8xf32>
    %3 = sdy.sharding_constraint %2 <@mesh, [{?}, {"b"}]> : tensor<8x8xf32>
    %4 = stablehlo.multiply %3, %3 : tensor<8x8xf32>
    %5 = stablehlo.abs %3 : tensor<8x8xf32>
    return %1, %5 : tensor<8x8xf32>, tensor<8x8xf32>
  }
}
