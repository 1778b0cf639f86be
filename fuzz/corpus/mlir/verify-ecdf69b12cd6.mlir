sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @f(%arg0: tensor<8xf32>) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}], replicated={"a"}>}) {
  return %arg0 : tensor<8xf32>
}
