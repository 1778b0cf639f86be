sdy.mesh @m = <["a"=2]>
func.func @h(%x: tensor<3x4xf32>, %i: tensor<2x1xi64>, %p: tensor<i32>) -> tensor<2x4xf32> {
  %0 = "stablehlo.gather"(%x, %i) {indices_are_sorted = false, slice_sizes = array<i64: 1, 4>,
      dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0],
      start_index_map = [0], index_vector_dim = 1>,
      sdy.sharding = #sdy.sharding_per_value<[<@m, [{}, {}]>]>} : (tensor<3x4xf32>, tensor<2x1xi64>) -> tensor<2x4xf32>
  %1 = "stablehlo.case"(%p) ({
    stablehlo.return %0 : tensor<2x4xf32>
  }, {
    %n = stablehlo.negate %0 : tensor<2x4xf32>
    stablehlo.return %n : tensor<2x4xf32>
  }) : (tensor<i32>) -> tensor<2x4xf32>
  %2 = "mhlo.custom"(%1) {zeta = 1, alpha = "s", mid = [1, 2.5, true]} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return %2 : tensor<2x4xf32>
}
