module {
  sdy.mesh @mesh = <["data"=2, "model"=4]>
  func.func @main(%arg0: tensor<1024x1024xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) -> tensor<1024x1024xf32> {
    %0 = stablehlo.negate %arg0 : tensor<1024x1024xf32>
    return %0 : tensor<1024x1024xf32>
  }
}
