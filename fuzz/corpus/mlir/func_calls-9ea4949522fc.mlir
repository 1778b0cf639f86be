module {
  sdy.mesh @mesh = <["a"=2, "b"=2]>
  func.func @main(%arg0: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
    %0 = sdy.named_computation<"foo">(%arg0) in_shardings=[<@mesh, [{"a"}]>] (%arg1: tensor<8xf32>) {
      %4 = sdy.data_flow_edge %arg1 sharding=<@mesh, [{"a"}]> : tensor<8xf32>
      %5 = stablehlo.negate %4 : tensor<8xf32>
      %6 = sdy.named_computation<"bar">(%5) (%arg2: tensor<8xf32>) {
        %8 = sdy.data_flow_edge %arg2 : tensor<8xf32>
        sdy.return %8 : tensor<8xf32>
      } : (tensor<8xf32>) -> tensor<8xf32>
      %7 = sdy.data_flow_edge %6 : tensor<8xf32>
      sdy.return %7 : tensor<8xf32>
    } : (tensor<8xf32>) -> tensor<8xf32>
    %1 = sdy.data_flow_edge %0 : tensor<8xf32>
    %2 = sdy.named_computation<"bar">(%1) out_shardings=[<@mesh, [{?}]>] (%arg1: tensor<8xf32>) {
      %4 = sdy.data_flow_edge %arg1 : tensor<8xf32>
      sdy.return %4 : tensor<8xf32>
    } : (tensor<8xf32>) -> tensor<8xf32>
    %3 = sdy.data_flow_edge %2 sharding=<@mesh, [{?}]> : tensor<8xf32>
    return %1, %3 : tensor<8xf32>, tensor<8xf32>
  }
}
