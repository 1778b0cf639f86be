module {
  sdy.mesh @mesh = <["a"=2, "b"=2]>
  func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}]>}, %arg1: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b"}]>}) -> (tensor<8xf32>, tensor<8xf32>) {
    %0 = sdy.sharding_constraint %arg1 <@mesh, [{?}]> : tensor<8xf32>
    %1 = sdy.sharding_constraint %arg0 <@mesh, [{?}]> : tensor<8xf32>
    %2 = stablehlo.negate %1 : tensor<8xf32>
    sdy.sharding_group %1 group_id=0 : tensor<8xf32>
    sdy.sharding_group %0 group_id=0 : tensor<8xf32>
    return %2, %0 : tensor<8xf32>, tensor<8xf32>
  }
}
