module {
  sdy.mesh @first = <["a"=2]>
  func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@first, [{"a"}]>}) -> tensor<8xf32> {
    %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@first, [{?}]>]>} : tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}
