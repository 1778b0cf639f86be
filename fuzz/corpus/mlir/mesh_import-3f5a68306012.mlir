module {
  sdy.mesh @m = <["a"=2, "b"=2]>
  sdy.mesh @mesh = <["x"=4]>
  sdy.mesh @maximal_mesh_3 = <[], device_ids=[3]>
  func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{"a"}]>}, %arg1: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}, %arg2: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<f32> {sdy.sharding = #sdy.sharding<@maximal_mesh_3, []>}) {
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    return %cst : tensor<f32>
  }
}
