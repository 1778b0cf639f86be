func.func @f(%a: !stablehlo.token, %b: tuple<tensor<f32>, tensor<2xi32>>, %c: tensor<?x8xf32>,
             %d: tensor<*xf32>, %e: tensor<4xcomplex<f32>>, %g: tensor<2xbf16, #enc<1>>) {
  return
}
