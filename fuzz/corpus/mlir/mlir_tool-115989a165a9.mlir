func.func @f(%a: tensor<4xf32>) {
  %0 = stablehlo.abs %a : tensor<4xi32>
}
