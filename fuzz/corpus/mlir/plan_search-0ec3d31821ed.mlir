  func.func @main(%%arg0: tensor<512x1024xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data", "model"}, {}]>}, %%arg1: tensor<1024x1024xf32>%s) -> (tensor<512x1024xf32>, tensor<1024x1024xf32>) {
    %%0 = stablehlo.dot_general %%arg0, %%arg1, contracting_dims = [1] x [0] : (tensor<512x1024xf32>, tensor<1024x1024xf32>) -> tensor<512x1024xf32>
    %%1 = stablehlo.dot_general %%arg0, %%0, contracting_dims = [0] x [0] : (tensor<512x1024xf32>, tensor<512x1024xf32>) -> tensor<1024x1024xf32>
    return %%0, %%1 : tensor<512x1024xf32>, tensor<1024x1024xf32>
  }
}
