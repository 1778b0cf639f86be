module {
  sdy.mesh @mesh = <["a"=4, "b"=2, "c"=3]>
  func.func @main(%arg0: tensor<6x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b", "a"}, {?}]>}, %arg1: tensor<8x12xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"c"}, {"a", "c"}]>}, %arg2: tensor<6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}]>}) -> (tensor<0x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", "b"}, {"c"}]>}) {
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<0x8xf32>
    return %cst : tensor<0x8xf32>
  }
}
