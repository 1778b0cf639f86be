module {
  func.func @f(%arg0: tensor<4xi32>, %arg1: tensor<4xf32>) -> tensor<4xi32> {
    %c = stablehlo.constant dense<1> : tensor<4xi32>
    %c_0 = stablehlo.constant dense<2> : tensor<4xi32>
    %cst = stablehlo.constant dense<1.500000e+00> : tensor<4xf32>
    %0 = stablehlo.add %arg0, %c : tensor<4xi32>
    %1:2 = stablehlo.while(%iterArg = %0, %iterArg_1 = %c_0) : tensor<4xi32>, tensor<4xi32>
     cond {
      %c_2 = stablehlo.constant dense<true> : tensor<i1>
      stablehlo.return %c_2 : tensor<i1>
    } do {
      %3 = stablehlo.add %iterArg, %iterArg_1 : tensor<4xi32>
      stablehlo.return %3, %iterArg_1 : tensor<4xi32>, tensor<4xi32>
    }
    %2 = stablehlo.multiply %1#0, %1#1 : tensor<4xi32>
    %output_state, %output = stablehlo.rng_bit_generator %2, algorithm =  DEFAULT : (tensor<4xi32>) -> (tensor<4xi32>, tensor<2xui32>)
    return %output_state : tensor<4xi32>
  }
}
