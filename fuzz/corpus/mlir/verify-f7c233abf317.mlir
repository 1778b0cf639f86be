sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @f(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}], unreduced={"b", "a"}>}) -> tensor<8x8xf32> {
  return %arg0 : tensor<8x8xf32>
}
