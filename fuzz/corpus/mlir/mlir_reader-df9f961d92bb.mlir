func.func @f(%a: tensor<f32>) {
  %0 = stablehlo.add %a, %a : (tensor<f32>) -> tensor<f32>
  return
}
