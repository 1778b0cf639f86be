module {
  sdy.mesh @mesh = <["a"=2, "b"=2]>
  func.func @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"b", ?}, {?}], replicated={"a"}>] out_shardings=[<@mesh, [{"b", ?}, {?}]>] manual_axes={"b"} (%arg1: tensor<4x8xf32>) {
      %4 = sdy.data_flow_edge %arg1 sharding=<@mesh, [{?}, {?}], replicated={"a"}> : tensor<4x8xf32>
      %5 = stablehlo.negate %4 : tensor<4x8xf32>
      sdy.return %5 : tensor<4x8xf32>
    } : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %1 = sdy.data_flow_edge %0 sharding=<@mesh, [{"b", ?}, {?}]> : tensor<8x8xf32>
    %2 = sdy.named_computation<"f">(%1) in_shardings=[<@mesh, [{"a"}, {}]>] (%arg1: tensor<8x8xf32>) {
      %4 = sdy.data_flow_edge %arg1 sharding=<@mesh, [{"a"}, {}]> : tensor<8x8xf32>
      sdy.return %4 : tensor<8x8xf32>
    } : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %3 = sdy.data_flow_edge %2 : tensor<8x8xf32>
    return %3 : tensor<8x8xf32>
  }
}
