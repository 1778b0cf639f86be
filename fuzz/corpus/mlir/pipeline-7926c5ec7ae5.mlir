sdy.mesh @mesh = <["a"=2, "b"=2, "one"=1]>
func.func private @layer(%arg0: tensor<8x16xf32>, %arg1: tensor<16x16xf32>) -> tensor<8x16xf32> {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
  %1 = stablehlo.constant dense<0.0> : tensor<8x16xf32>
  %2 = stablehlo.maximum %0, %1 : tensor<8x16xf32>
  return %2 : tensor<8x16xf32>
}
func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", "one", ?}, {?}]>},
                %arg1: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {"b"}]>},
                %arg2: tensor<16x16xf32>) -> tensor<8x16xf32> {
  %0 = call @layer(%arg0, %arg1) : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
  %1 = call @layer(%0, %arg2) : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
  %2 = sdy.sharding_constraint %1 <@mesh, [{"a"}, {}]> : tensor<8x16xf32>
  return %2 : tensor<8x16xf32>
}
