sdy.mesh @m = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<32x96xf32>) -> tensor<32x96xf32> {
  %0 = stablehlo.constant dense<0> : tensor<i32>
  %1 = stablehlo.constant dense<1> : tensor<i32>
  %2 = stablehlo.constant dense<32> : tensor<i32>
  %3:2 = stablehlo.while(%iterArg = %arg0, %iterArg_2 = %0) : tensor<32x96xf32>, tensor<i32>
    cond {
    %6 = stablehlo.compare  LT, %iterArg_2, %2 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %6 : tensor<i1>
  } do {
    %6 = stablehlo.add %iterArg_2, %1 : tensor<i32>
    %7 = stablehlo.add %iterArg, %iterArg {sdy.sharding = #sdy.sharding_per_value<[<@m, [{"a"}, {"b"}]>]>} : tensor<32x96xf32>
    %8 = stablehlo.custom_call @sdy_testonly(%7) : (tensor<32x96xf32>) -> tensor<32x96xf32>
    stablehlo.return %8, %6 : tensor<32x96xf32>, tensor<i32>
  }
  %4 = sdy.data_flow_edge %3#0 : tensor<32x96xf32>
  %5 = sdy.data_flow_edge %3#1 : tensor<i32>
  return %4 : tensor<32x96xf32>
}
