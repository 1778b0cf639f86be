module {
  sdy.mesh @mesh = <["a"=2, "b"=2]>
  func.func @main(%arg0: tensor<8x8xf32>, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b"}, {}]>}) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {
    %0 = sdy.reshard %arg0 <@mesh, [{"a"}, {}]> : tensor<8x8xf32>
    %1 = stablehlo.add %arg1, %arg1 : tensor<8x8xf32>
    %2 = sdy.reshard %1 <@mesh, [{"a"}, {?}]> : tensor<8x8xf32>
    %3 = sdy.reshard %arg1 <@mesh, [{"a"}, {}]> : tensor<8x8xf32>
    %4 = stablehlo.multiply %arg1, %arg1 : tensor<8x8xf32>
    %5 = sdy.reshard %4 <@mesh, [{}, {"b"}]> : tensor<8x8xf32>
    %6 = sdy.reshard %4 <@mesh, [{"a"}, {}]> : tensor<8x8xf32>
    return %0, %2, %3, %5, %6 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
  }
}
