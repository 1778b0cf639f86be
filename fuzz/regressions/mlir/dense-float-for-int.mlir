func.func @main() -> tensor<2xi32> {
  %0 = stablehlo.constant dense<[1.5, 2.0]> : tensor<2xi32>
  return %0 : tensor<2xi32>
}
