sdy.mesh @first = <["a"=2]>
sdy.mesh @second = <["a"=2]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@second, [{"a"}]>}) -> tensor<8xf32> {
  %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@second, [{?}]>]>} : tensor<8xf32>
  return %0 : tensor<8xf32>
}
