func.func @f(%a: tensor<f32>) {
  %0 = stablehlo.add %a, %a : tensor<i32>
  return
}
