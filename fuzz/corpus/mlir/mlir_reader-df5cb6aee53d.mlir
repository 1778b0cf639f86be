sdy.mesh @mesh = <["a"=2, "b"=4]>
func.func @f(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {"b", ?}p1]>, jax.x = 1 : i64})
    -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {}], replicated={"a"}>}) {
  return %arg0 : tensor<8x8xf32>
}
