func.func @f(%a: tensor<f32>) {
  %0:2 = stablehlo.abs %a : tensor<f32>
  return
}
