module {
  sdy.mesh @mesh = <["a"=2, "b"=2]>
  func.func @main(%arg0: tensor<8xf32>, %arg1: tensor<i32>) -> tensor<8xf32> {
    %0:2 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %arg1) : tensor<8xf32>, tensor<i32>
     cond {
      %3 = stablehlo.compare  LT, %iterArg_0, %iterArg_0 : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %3 : tensor<i1>
    } do {
      %3 = sdy.sharding_constraint %iterArg <@mesh, [{"a"}]> : tensor<8xf32>
      %4 = stablehlo.negate %3 : tensor<8xf32>
      %5 = stablehlo.add %4, %3 : tensor<8xf32>
      stablehlo.return %5, %iterArg_0 : tensor<8xf32>, tensor<i32>
    }
    %1 = sdy.data_flow_edge %0#0 : tensor<8xf32>
    %2 = sdy.data_flow_edge %0#1 : tensor<i32>
    return %1 : tensor<8xf32>
  }
}
