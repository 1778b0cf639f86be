module {
  sdy.mesh @m = <["a"=2]>
  func.func @h(%arg0: tensor<3x4xf32>, %arg1: tensor<2x1xi64>, %arg2: tensor<i32>) -> tensor<2x4xf32> {
    %0 = "stablehlo.gather"(%arg0, %arg1) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 4>}> {sdy.sharding = #sdy.sharding_per_value<[<@m, [{}, {}]>]>} : (tensor<3x4xf32>, tensor<2x1xi64>) -> tensor<2x4xf32>
    %1 = "stablehlo.case"(%arg2) ({
      stablehlo.return %0 : tensor<2x4xf32>
    }, {
      %3 = stablehlo.negate %0 : tensor<2x4xf32>
      stablehlo.return %3 : tensor<2x4xf32>
    }) : (tensor<i32>) -> tensor<2x4xf32>
    %2 = "mhlo.custom"(%1) {alpha = "s", mid = [1, 2.500000e+00, true], zeta = 1 : i64} : (tensor<2x4xf32>) -> tensor<2x4xf32>
    return %2 : tensor<2x4xf32>
  }
}
