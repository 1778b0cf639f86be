  func.func @main(%arg0: tensor<6x16xf32>) -> tensor<6x16xf32> {
    %0 = stablehlo.abs %arg0 : tensor<6x16xf32>
    return %0 : tensor<6x16xf32>
  }
}
