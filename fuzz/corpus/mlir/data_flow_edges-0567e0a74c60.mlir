sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"b"}, {?}]>] out_shardings=[<@mesh, [{"b"}, {?}]>] manual_axes={"b"} (%arg1: tensor<4x8xf32>) {
    %1 = sdy.data_flow_edge %arg1 sharding=<@mesh, [{"a", ?}, {?}]> : tensor<4x8xf32>
    %2 = stablehlo.negate %1 : tensor<4x8xf32>
    sdy.return %2 : tensor<4x8xf32>
  } : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %3 = sdy.data_flow_edge %0 sharding=<@mesh, [{"b", "a", ?}, {?}]> : tensor<8x8xf32>
  %4:2 = stablehlo.optimization_barrier %3, %3 : tensor<8x8xf32>, tensor<8x8xf32>
  %5 = sdy.data_flow_edge %4#1 sharding=<@mesh, [{}, {"a"}]> : tensor<8x8xf32>
  %6 = sdy.data_flow_edge %4#0 : tensor<8x8xf32>
  return %5 : tensor<8x8xf32>
}
