func.func @main(%arg0: tensor<8xf32>, %arg1: tensor<4xf32>) -> tensor<8xf32> {
  sdy.sharding_group %arg0 group_id=1 : tensor<8xf32>
  sdy.sharding_group %arg1 group_id=1 : tensor<4xf32>
  return %arg0 : tensor<8xf32>
}
