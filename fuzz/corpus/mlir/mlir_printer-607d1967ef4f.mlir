sdy.mesh @m = <["a"=2]>
func.func @f(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0:3 = "x.three"(%arg0) : (tensor<8xf32>) -> (tensor<8xf32>, tensor<4x4xf32>, !stablehlo.token)
  return %0#0 : tensor<8xf32>
}
