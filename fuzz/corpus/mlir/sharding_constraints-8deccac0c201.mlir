module {
  sdy.mesh @mesh = <["a"=2, "b"=2]>
  func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b"}, {}]>}) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {
    %0 = sdy.sharding_constraint %arg0 <@mesh, [{"a"}, {}]> : tensor<8x8xf32>
    %1 = stablehlo.add %arg1, %arg1 : tensor<8x8xf32>
    %2 = sdy.sharding_constraint %1 <@mesh, [{"a"}, {?}]> : tensor<8x8xf32>
    %3 = sdy.sharding_constraint %arg1 <@mesh, [{"a"}, {}]> : tensor<8x8xf32>
    %4 = stablehlo.multiply %arg1, %arg1 : tensor<8x8xf32>
    %5 = sdy.sharding_constraint %4 <@mesh, [{}, {"b"}]> : tensor<8x8xf32>
    %6 = sdy.sharding_constraint %4 <@mesh, [{"a"}, {}]> : tensor<8x8xf32>
    return %0, %2, %3, %5, %6 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
  }
}
