// A two-layer MLP (dense -> relu -> dense) as jax.jit(...).lower(...).as_text() prints it with
// the Shardy partitioner on a 4x2 mesh: the batch of x is split over "data", the first weight
// is column-split over "model", the hidden activation is pinned with a sharding constraint, and
// the second weight and both biases are left for propagation to decide.
//
//   build/bin/shardplan-opt examples/mlp.mlir
module @jit_mlp attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=4, "model"=2]>
  func.func public @main(%arg0: tensor<32x256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>},
                         %arg1: tensor<256x512xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>},
                         %arg2: tensor<512xf32>,
                         %arg3: tensor<512x128xf32>,
                         %arg4: tensor<128xf32>) -> (tensor<32x128xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<32x256xf32>, tensor<256x512xf32>) -> tensor<32x512xf32>
    %1 = stablehlo.broadcast_in_dim %arg2, dims = [1] : (tensor<512xf32>) -> tensor<32x512xf32>
    %2 = stablehlo.add %0, %1 : tensor<32x512xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<32x512xf32>
    %4 = stablehlo.maximum %2, %3 : tensor<32x512xf32>
    %5 = sdy.sharding_constraint %4 <@mesh, [{"data"}, {"model"}]> : tensor<32x512xf32>
    %6 = stablehlo.dot_general %5, %arg3, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<32x512xf32>, tensor<512x128xf32>) -> tensor<32x128xf32>
    %7 = stablehlo.broadcast_in_dim %arg4, dims = [1] : (tensor<128xf32>) -> tensor<32x128xf32>
    %8 = stablehlo.add %6, %7 : tensor<32x128xf32>
    return %8 : tensor<32x128xf32>
  }
}
