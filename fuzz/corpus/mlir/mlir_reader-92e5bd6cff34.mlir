func.func @f(%x: tensor<2x13xf32>, %i: tensor<i32>, %p: tensor<f32>) -> tensor<4x2xf32> {
  %0 = stablehlo.broadcast_in_dim %x, dims = [0, 2] : (tensor<2x13xf32>) -> tensor<2x3x13xf32>
  %1 = stablehlo.transpose %0, dims = [2, 1, 0] : (tensor<2x3x13xf32>) -> tensor<13x3x2xf32>
  %2 = stablehlo.slice %1 [0:4, 1:3:2, 0:2] : (tensor<13x3x2xf32>) -> tensor<4x1x2xf32>
  %3 = stablehlo.concatenate %2, %2, dim = 1 : (tensor<4x1x2xf32>, tensor<4x1x2xf32>) -> tensor<4x2x2xf32>
  %4 = "stablehlo.reverse"(%3) {dimensions = array<i64: 0, 2>} : (tensor<4x2x2xf32>) -> tensor<4x2x2xf32>
  %5 = stablehlo.pad %4, %p, low = [0, -1, 0], high = [1, 0, 0], interior = [0, 0, 1] : (tensor<4x2x2xf32>, tensor<f32>) -> tensor<5x1x3xf32>
  %6 = stablehlo.dynamic_slice %5, %i, %i, %i, sizes = [4, 1, 2] : (tensor<5x1x3xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<4x1x2xf32>
  %7 = stablehlo.reshape %6 : (tensor<4x1x2xf32>) -> tensor<4x2xf32>
  %8 = "stablehlo.sort"(%7) ({
  ^bb0(%l: tensor<f32>, %r: tensor<f32>):
    %c = stablehlo.compare  GT, %l, %r,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) {dimension = 1 : i64, is_stable = true} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  return %8 : tensor<4x2xf32>
}
