func.func @f(%a: tensor<f32>) {
  %a = stablehlo.abs %a : tensor<f32>
  return
}
