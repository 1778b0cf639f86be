sdy.mesh @mesh = <["a"=2, "one"=1, "b"=2]>
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"one"}p1, {"a", "one", ?}], replicated={"one", "b"}>})
    -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"one", "b"}, {}]>}) {
  %0 = sdy.sharding_constraint %arg0 <@mesh, [{}, {"one"}], unreduced={"one"}> : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
