sdy.mesh @m = <["a"=2, "b"=2, "c"=2]>
func.func @main(%arg0: tensor<i32>, %arg1: tensor<8xi64> {sdy.sharding = #sdy.sharding<@m, [{"a", "b"}]>}, %arg2: tensor<8xi64> {sdy.sharding = #sdy.sharding<@m, [{"a", "c"}]>}) -> tensor<8xi64> {
  %0 = "stablehlo.case"(%arg0) ({
    stablehlo.return %arg1 : tensor<8xi64>
  }, {
    stablehlo.return %arg2 : tensor<8xi64>
  }) : (tensor<i32>) -> tensor<8xi64>
  %1 = sdy.data_flow_edge %0 : tensor<8xi64>
  return %1 : tensor<8xi64>
}
