sdy.mesh @mesh = <["a"=2]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = sdy.constant dense<1.0> : tensor<8xf32>
  %1 = stablehlo.add %0, %arg0 : tensor<8xf32>
  %2 = stablehlo.negate %1 : tensor<8xf32>
  %3 = sdy.reshard %arg0 <@mesh, [{"a"}]> : tensor<8xf32>
  %4 = sdy.all_reduce {} %arg0 out_sharding=<@mesh, [{}]> : tensor<8xf32>
  %5 = stablehlo.abs %4 : tensor<8xf32>
  stablehlo.custom_call @side_effect(%2) {has_side_effect = true} : (tensor<8xf32>) -> ()
  %6 = stablehlo.custom_call @opaque(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
  return %5 : tensor<8xf32>
}
