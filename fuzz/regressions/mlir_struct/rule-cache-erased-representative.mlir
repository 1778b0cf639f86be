module @jit_mlp attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=3, "model"=2, "pipe"=4]>
  func.func public @main(%arg0: tensor<4x256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg1: tensor<256x256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg2: tensor<256x256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"pipe", "model"}, {"data"}]>}) -> tensor<4x256xf32> {
    %0 = sdy.sharding_constraint %arg1 <@mesh, [{"pipe"}, {"model", "data"}]> : tensor<256x256xf32>
    %1 = stablehlo.dot_general %arg0, %0, contracting_dims = [1] x [0] : (tensor<4x256xf32>, tensor<256x256xf32>) -> tensor<4x256xf32>
    %2 = stablehlo.tanh %1 : tensor<4x256xf32>
    %3 = stablehlo.dot_general %arg0, %arg2, contracting_dims = [1] x [0] : (tensor<4x256xf32>, tensor<256x256xf32>) -> tensor<4x256xf32>
    %4 = stablehlo.tanh %3 : tensor<4x256xf32>
    return %4 : tensor<4x256xf32>
  }
}
