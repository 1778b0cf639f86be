module {
  func.func @c(%arg0: tensor<2x9x9x5xf3999999999999999999999999999999999999999999999999999999999999999992>, %arg1: tensor<3x3x5x7xf32>) -> tensor<2x4x4x7xf32> {
    %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 1, 0, f]x[o, 0, 1, i]->[f, b, 0, 1], window = {stride = [2, 2], pad = [[0, 1], [1, 0]], lhs_dilate = [1, 1], rhs_dilate = [1, 2], reverse = [0, 1]} {batch_group_count = 1 : i64, feature_group_count = 0 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DULT>]} : (tensor<2x9x9x5xf32>, tensor<3x3x5x7xf32>) -> tensor<2x4x4x7xf32>
    return %0 : tensor<2x4x4x7xf32>
  }
}
