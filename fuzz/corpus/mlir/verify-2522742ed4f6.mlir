sdy.mesh @maximal = <[], device_ids=[0]>
func.func @f(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@maximal, [{}, {}]>}) -> tensor<8x8xf32> {
  return %arg0 : tensor<8x8xf32>
}
