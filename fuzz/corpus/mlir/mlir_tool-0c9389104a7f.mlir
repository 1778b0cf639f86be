module {
  sdy.mesh @m = <["a"=2]>
  func.func @f(%arg0: tensor<4xf32> {sdy.sharding = #sdy.sharding<@m, [{"a"}]>}) -> tensor<4xf32> {
    %0 = stablehlo.negate %arg0 : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
