func.func @f(%a: tensor<f32>) {
  %0 = foo.bar %a
}
