func.func @main(%arg0: tensor<i32>) -> tensor<i32> {
  %0 = stablehlo.constant dense<1> : tensor<i32>
  %1 = stablehlo.constant dense<8> : tensor<i32>
  %2:2 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %0) : tensor<i32>, tensor<i32>
    cond {
    %3 = stablehlo.compare LT, %iterArg, %1 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %3 : tensor<i1>
  } do {
    %3 = stablehlo.add %iterArg, %0 : tensor<i32>
    stablehlo.return %3, %iterArg_0 : tensor<i32>, tensor<i32>
  }
  return %2#0 : tensor<i32>
}
