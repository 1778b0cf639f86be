  func.func @main(%arg0: tensor<8x6xf32>) -> tensor<8x6xf32> {
    return %arg0 : tensor<8x6xf32>
  }
}
