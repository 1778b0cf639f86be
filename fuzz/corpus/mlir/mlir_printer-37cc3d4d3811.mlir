module {
  sdy.mesh @"my mesh" = <["a\22b"=2, "c"=2]>
  func.func @f(%arg0: tensor<4xf32> {sdy.sharding = #sdy.sharding<@"my mesh", [{"a\22b"}], unreduced=max{"c"}>}) -> tensor<4xf32> {
    %0 = stablehlo.custom_call @"odd target"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
