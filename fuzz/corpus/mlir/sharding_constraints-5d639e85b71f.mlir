sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8xf32>, %arg1: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0:2 = sdy.manual_computation(%arg0, %arg1) in_shardings=[<@mesh, [{"a"}]>, <@mesh, [{"a", ?}]>] out_shardings=[<@mesh, [{"a"}]>, <@mesh, [{"a"}]>] manual_axes={"a"} (%arg2: tensor<4xf32>, %arg3: tensor<4xf32>) {
    sdy.return %arg2, %arg3 : tensor<4xf32>, tensor<4xf32>
  } : (tensor<8xf32>, tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)
  return %0#0, %0#1 : tensor<8xf32>, tensor<8xf32>
}
