  func.func @main(%%arg0: tensor<8x16xf32>, %%arg1: tensor<16x32xf32>) -> tensor<8x32xf32> {
    %%0 = stablehlo.dot_general %%arg0, %%arg1, contracting_dims = [1] x [0] %s: (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
    return %%0 : tensor<8x32xf32>
  }
}
