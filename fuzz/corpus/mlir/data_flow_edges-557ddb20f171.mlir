sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<i32>, %arg1: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = "stablehlo.case"(%arg0) ({
    stablehlo.return %arg1 : tensor<8xf32>
  }, {
    stablehlo.return %arg1 : tensor<8xf32>
  }) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}]>]>} : (tensor<i32>) -> tensor<8xf32>
  %1:2 = stablehlo.optimization_barrier {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a", ?}]>, <@mesh, [{?}]>]>} %0, %arg1 : tensor<8xf32>, tensor<8xf32>
  return %1#0, %1#1 : tensor<8xf32>, tensor<8xf32>
}
