module {
  func.func @main(%arg0: tensor<64x1024xf32>, %arg1: tensor<1024x4096xf32>, %arg2: tensor<4096x1024xf32>) -> tensor<64x1024xf32> {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<64x1024xf32>, tensor<1024x4096xf32>) -> tensor<64x4096xf32>
    %1 = stablehlo.tanh %0 : tensor<64x4096xf32>
    %2 = stablehlo.dot_general %1, %arg2, contracting_dims = [1] x [0] : (tensor<64x4096xf32>, tensor<4096x1024xf32>) -> tensor<64x1024xf32>
    return %2 : tensor<64x1024xf32>
  }
}
