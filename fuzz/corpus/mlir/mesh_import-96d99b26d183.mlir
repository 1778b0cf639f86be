module {
  sdy.mesh @mesh = <["a"=2, "one"=1, "b"=2]>
  func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"a", ?}], replicated={"b"}>}) -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b"}, {}]>}) {
    %0 = sdy.sharding_constraint %arg0 <@mesh, [{}, {}]> : tensor<8x8xf32>
    return %0 : tensor<8x8xf32>
  }
}
