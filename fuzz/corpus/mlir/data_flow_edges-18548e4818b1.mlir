sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8xf32>, %arg1: tensor<i32>, %arg2: !stablehlo.token) -> (tensor<8xf32>, !stablehlo.token) {
  %0:3 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %arg1, %iterArg_1 = %arg2) : tensor<8xf32>, tensor<i32>, !stablehlo.token
    cond {
    %2 = stablehlo.compare LT, %iterArg_0, %iterArg_0 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %2 : tensor<i1>
  } do {
    %2 = stablehlo.negate %iterArg : tensor<8xf32>
    stablehlo.return %2, %iterArg_0, %iterArg_1 : tensor<8xf32>, tensor<i32>, !stablehlo.token
  }
  %1 = stablehlo.negate %0#0 : tensor<8xf32>
  return %1, %0#2 : tensor<8xf32>, !stablehlo.token
}
