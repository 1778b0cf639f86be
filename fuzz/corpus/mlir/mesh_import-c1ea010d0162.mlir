sdy.mesh @mesh = <["a"=2]>
sdy.mesh @mesh_0 = <["b"=2]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
