sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}]>}, %arg1: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b"}]>}) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = stablehlo.negate %arg0 : tensor<8xf32>
  sdy.sharding_group %arg0 group_id=7 : tensor<8xf32>
  sdy.sharding_group %arg1 group_id=7 : tensor<8xf32>
  return %0, %arg1 : tensor<8xf32>, tensor<8xf32>
}
