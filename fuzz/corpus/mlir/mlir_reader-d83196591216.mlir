func.func @f(%a: tensor<f32>) {
  %0:2 = "x.y"(%a) : (tensor<f32>) -> (tensor<f32>, tensor<f32>)
  %1 = stablehlo.abs %0#5 : tensor<f32>
  return
}
