func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  // expected-warning@+2 {{custom call @mystery is unknown}}
  %0 = stablehlo.custom_call @mystery(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
