sdy.mesh @m = <["a"=2]>
func.func @f(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = sdy.sharding_constraint %arg0 <@m, [{"a"}]> : tensor<8xf32>
  return %0 : tensor<8xf32>
}
