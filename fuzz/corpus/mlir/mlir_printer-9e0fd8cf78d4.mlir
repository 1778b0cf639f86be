module {
  func.func @g(%arg0: tensor<8x16xf32>, %arg1: tensor<16x4xf32>) -> tensor<8x4xf32> {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
    %1 = stablehlo.abs %0 : tensor<8x4xf32>
    %2 = stablehlo.transpose %1, dims = [1, 0] : (tensor<8x4xf32>) -> tensor<4x8xf32>
    %3 = stablehlo.custom_call @foo(%2) {backend_config = "", has_side_effect = true} : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %4 = stablehlo.compare  LT, %3, %3 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
    %5 = stablehlo.broadcast_in_dim %1, dims = [1, 2] : (tensor<8x4xf32>) -> tensor<2x8x4xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<2xf32>
    return %0 : tensor<8x4xf32>
  }
}
