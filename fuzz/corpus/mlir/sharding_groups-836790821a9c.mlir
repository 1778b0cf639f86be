module {
  sdy.mesh @mesh = <["a"=2, "b"=2]>
  func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}]>}, %arg1: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}]>}, %arg2: tensor<8xf32>, %arg3: tensor<8xf32>) -> tensor<8xf32> {
    sdy.sharding_group %arg1 group_id=0 : tensor<8xf32>
    sdy.sharding_group %arg2 group_id=1 : tensor<8xf32>
    sdy.sharding_group %arg0 group_id=0 : tensor<8xf32>
    sdy.sharding_group %arg3 group_id=2 : tensor<8xf32>
    return %arg0 : tensor<8xf32>
  }
}
