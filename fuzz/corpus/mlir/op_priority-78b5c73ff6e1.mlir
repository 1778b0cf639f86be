func.func @main(%arg0: tensor<8x8xf32>, %arg1: tensor<8x8xf32>, %arg2: tensor<8xf32>, %i: tensor<i32>) -> tensor<8x8xf32> {
  %0 = stablehlo.add %arg0, %arg0 : tensor<8x8xf32>
  %1 = stablehlo.add %arg1, %0 : tensor<8x8xf32>
  %2 = stablehlo.dot_general %1, %1, contracting_dims = [1] x [0] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %3 = stablehlo.broadcast_in_dim %arg2, dims = [0] : (tensor<8xf32>) -> tensor<8x8xf32>
  %4 = stablehlo.dynamic_slice %3, %i, %i, sizes = [4, 8] : (tensor<8x8xf32>, tensor<i32>, tensor<i32>) -> tensor<4x8xf32>
  return %2 : tensor<8x8xf32>
}
