module {
  sdy.mesh @mesh = <["a"=2, "b"=2]>
  func.func @main(%arg0: tensor<8xf32>, %arg1: tensor<i32>, %arg2: !stablehlo.token) -> (tensor<8xf32>, !stablehlo.token) {
    %0:3 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %arg1, %iterArg_1 = %arg2) : tensor<8xf32>, tensor<i32>, !stablehlo.token attributes {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a", ?}]>, <@mesh, []>, <@mesh, []>]>}
     cond {
      %4 = stablehlo.compare  LT, %iterArg_0, %iterArg_0 : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %4 : tensor<i1>
    } do {
      %4 = stablehlo.negate %iterArg : tensor<8xf32>
      stablehlo.return %4, %iterArg_0, %iterArg_1 : tensor<8xf32>, tensor<i32>, !stablehlo.token
    }
    %1 = sdy.data_flow_edge %0#0 sharding=<@mesh, [{"a", ?}]> : tensor<8xf32>
    %2 = sdy.data_flow_edge %0#1 sharding=<@mesh, []> : tensor<i32>
    %3 = stablehlo.negate %1 : tensor<8xf32>
    return %3, %0#2 : tensor<8xf32>, !stablehlo.token
  }
}
