sdy.mesh @m = <["a"=2, "b"=2, "c"=2]>
func.func @main(%arg0: tensor<32x32xf32> {sdy.sharding = #sdy.sharding<@m, [{?}, {"c", ?}]>}) -> tensor<32x32xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@m, [{"b", ?}, {?}]>] out_shardings=[<@m, [{"b", ?}, {?}]>] manual_axes={"b"} (%arg1: tensor<16x32xf32>) {
    %2 = sdy.data_flow_edge %arg1 sharding=<@m, [{?}, {?}]> : tensor<16x32xf32>
    %3 = stablehlo.add %2, %2 {sdy.sharding = #sdy.sharding_per_value<[<@m, [{"a", ?}, {?}]>]>} : tensor<16x32xf32>
    %4 = stablehlo.custom_call @sdy_testonly(%3) : (tensor<16x32xf32>) -> tensor<16x32xf32>
    sdy.return %4 : tensor<16x32xf32>
  } : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %1 = sdy.data_flow_edge %0 sharding=<@m, [{"b", ?}, {?}]> : tensor<32x32xf32>
  return %1 : tensor<32x32xf32>
}
