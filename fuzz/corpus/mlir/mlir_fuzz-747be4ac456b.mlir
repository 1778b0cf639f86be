module @m attributes {a = array<i64: 1, 2>, b = dense<[1, 1]> : tensor<2xi8>} {
  sdy.mesh @mesh = <["x"=4], device_ids=[3, 2, 1, 0]>
  func.func private @decl(tensor<4xf32>) -> tensor<4xf32>
  func.func @mc(%a: tensor<16xf32>) -> tensor<16xf32> {
    %0 = sdy.manual_computation(%a) in_shardings=[<@mesh, [{"x"}]>] out_shardings=[<@mesh, [{"x"}]>] manual_axes={"x"} (%b: tensor<4xf32>) {
      %1 = func.call @decl(%b) : (tensor<4xf32>) -> tensor<4xf32>
      sdy.return %1 : tensor<4xf32>
    } : (tensor<16xf32>) -> tensor<16xf32>
    %2 = "stablehlo.gather"(%0, %0) <{dimension_numbers = #stablehlo.gather<offset_dims = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1>}> : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
    return %2 : tensor<16xf32>
  }
}
