module {
  sdy.mesh @mesh = <["a"=2]>
  sdy.mesh @mesh_0 = <["b"=2]>
  func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh_0, [{"b"}]>}) -> tensor<8xf32> {
    return %arg0 : tensor<8xf32>
  }
}
