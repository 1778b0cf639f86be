func.func @main() -> tensor<2xf32> {
  %0 = stablehlo.constant dense<"0x0000803F0000"> : tensor<2xf32>
  return %0 : tensor<2xf32>
}
