sdy.mesh @m = <["a"=2, "b"=2]>
func.func private @callee(%arg0: tensor<8x2xi32>) -> tensor<8x2xi32> {
  %0 = sdy.func_data_flow_edge %arg0 : tensor<8x2xi32>
  %1 = stablehlo.negate %0 : tensor<8x2xi32>
  return %1 : tensor<8x2xi32>
}
func.func @main(%arg0: tensor<8x2xi32> {sdy.sharding = #sdy.sharding<@m, [{"a"}, {}]>}) -> tensor<8x2xi32> {
  %0 = call @callee(%arg0) : (tensor<8x2xi32>) -> tensor<8x2xi32>
  %1 = sdy.func_data_flow_edge %0 : tensor<8x2xi32>
  return %1 : tensor<8x2xi32>
}
