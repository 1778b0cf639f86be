sdy.mesh @m = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x8xf32>, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{"b"}, {"a"}]>}) -> tensor<8x8xf32> {
  %0 = sdy.sharding_constraint %arg0 <@m, [{"a"}, {?}]> : tensor<8x8xf32>
  %1 = stablehlo.add %0, %arg1 : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}
