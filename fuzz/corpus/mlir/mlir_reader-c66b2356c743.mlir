func.func @f(%x: tensor<3x4x2x5xf32>, %i: tensor<2x3x3xi64>, %k: tensor<3x3x5x7xf32>,
             %img: tensor<2x9x9x5xf32>, %z: tensor<f32>) -> tensor<2x3x2x2x1xf32> {
  %0 = "stablehlo.gather"(%x, %i) {
    dimension_numbers = #stablehlo.gather<offset_dims = [2, 3, 4], collapsed_slice_dims = [0],
      start_index_map = [1, 0, 3], index_vector_dim = 2>,
    slice_sizes = array<i64: 1, 2, 2, 1>, indices_are_sorted = false
  } : (tensor<3x4x2x5xf32>, tensor<2x3x3xi64>) -> tensor<2x3x2x2x1xf32>
  %1 = stablehlo.convolution(%img, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
    window = {stride = [2, 2], pad = [[0, 1], [1, 0]], rhs_dilate = [1, 2]}
    {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x9x9x5xf32>, tensor<3x3x5x7xf32>) -> tensor<2x4x4x7xf32>
  %2 = "stablehlo.reduce_window"(%img, %z) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) {window_dimensions = array<i64: 1, 3, 3, 1>, padding = dense<[[0, 0], [1, 1], [1, 1], [0, 0]]> : tensor<4x2xi64>}
     : (tensor<2x9x9x5xf32>, tensor<f32>) -> tensor<2x9x9x5xf32>
  return %0 : tensor<2x3x2x2x1xf32>
}
