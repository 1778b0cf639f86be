  func.func @main(%arg0: tensor<8x4096xf32>) -> tensor<8x32x128xf32> {
    %0 = stablehlo.reshape %arg0 : (tensor<8x4096xf32>) -> tensor<8x32x128xf32>
    return %0 : tensor<8x32x128xf32>
  }
}
