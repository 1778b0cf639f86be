module {
  func.func @main(%arg0: tensor<i32>) -> tensor<i32> {
    %0 = sdy.constant dense<1> : tensor<i32>
    %1 = sdy.constant dense<1> : tensor<i32>
    %2 = sdy.constant dense<8> : tensor<i32>
    %3:2 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %0) : tensor<i32>, tensor<i32>
     cond {
      %4 = stablehlo.compare  LT, %iterArg, %2 : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %4 : tensor<i1>
    } do {
      %4 = stablehlo.add %iterArg, %1 : tensor<i32>
      stablehlo.return %4, %iterArg_0 : tensor<i32>, tensor<i32>
    }
    return %3#0 : tensor<i32>
  }
}
