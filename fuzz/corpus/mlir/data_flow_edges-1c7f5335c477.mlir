module {
  sdy.mesh @mesh = <["a"=2, "b"=2]>
  func.func @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"b", "a", ?}, {?}]>] out_shardings=[<@mesh, [{"b", "a", ?}, {?}]>] manual_axes={"b"} (%arg1: tensor<4x8xf32>) {
      %2 = stablehlo.negate %arg1 : tensor<4x8xf32>
      sdy.return %2 : tensor<4x8xf32>
    } : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %1:2 = stablehlo.optimization_barrier {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}, {?}]>, <@mesh, [{}, {"a"}]>]>} %0, %0 : tensor<8x8xf32>, tensor<8x8xf32>
    return %1#1 : tensor<8x8xf32>
  }
}
