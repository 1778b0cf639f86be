sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", ?}, {}]>}, %arg1: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %1 = stablehlo.custom_call @foo(%0) {backend_config = "x", has_side_effect = true} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %2 = stablehlo.add %1, %0 : tensor<8x4xf32>
  return %2 : tensor<8x4xf32>
}
