sdy.mesh @m = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{"a"}, {}]>}, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{"b"}, {}]>}) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  sdy.sharding_group %arg0 group_id=7 : tensor<8x8xf32>
  sdy.sharding_group %arg1 group_id=7 : tensor<8x8xf32>
  return %arg0, %arg1 : tensor<8x8xf32>, tensor<8x8xf32>
}
