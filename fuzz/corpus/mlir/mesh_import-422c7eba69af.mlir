module {
  sdy.mesh @mesh = <["a"=2]>
  func.func private @used(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    return %arg0 : tensor<4xf32>
  }
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = call @used(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
