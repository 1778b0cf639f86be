func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  sdy.sharding_group %arg0 group_id=3 : tensor<8xf32>
  sdy.sharding_group %arg0 group_id=4 : tensor<8xf32>
  return %arg0 : tensor<8xf32>
}
