module {
  sdy.mesh @mesh = <["a"=2]>
  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    %0 = sdy.constant dense<1.000000e+00> : tensor<8xf32>
    %1 = stablehlo.add %0, %arg0 : tensor<8xf32>
    %2 = stablehlo.negate %1 : tensor<8xf32>
    %3 = stablehlo.abs %arg0 : tensor<8xf32>
    stablehlo.custom_call @side_effect(%2) {has_side_effect = true} : (tensor<8xf32>) -> ()
    %4 = stablehlo.custom_call @opaque(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
    return %3 : tensor<8xf32>
  }
}
