sdy.mesh @m = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@m, [{"a"}, {?}]>}, %arg1: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@m, [{?}, {"a"}]>}) -> tensor<8x8xf32> {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  %1 = stablehlo.abs %arg0 : tensor<8x16xf32>
  return %0 : tensor<8x8xf32>
}
