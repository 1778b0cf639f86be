sdy.mesh @m = <["a"=2]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{"a"}]>}) -> tensor<8xf32> {
  %c = stablehlo.constant dense<1.0> : tensor<8xf32>
  %0 = stablehlo.multiply %arg0, %c : tensor<8xf32>
  %1 = stablehlo.custom_call @sdy_testonly(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
  %2 = stablehlo.abs %arg0 : tensor<8xf32>
  return %2 : tensor<8xf32>
}
