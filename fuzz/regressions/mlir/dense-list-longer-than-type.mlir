func.func @main() -> tensor<2xf32> {
  %0 = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<2xf32>
  return %0 : tensor<2xf32>
}
