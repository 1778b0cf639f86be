sdy.mesh @m = <["a"=2]>
func.func @f(%a: tensor<4xf32> {sdy.sharding = #sdy.sharding<@m, [{"a"}]>}) -> tensor<4xf32> {
  %0 = "stablehlo.negate"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
