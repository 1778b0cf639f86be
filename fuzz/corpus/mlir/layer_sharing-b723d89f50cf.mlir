module {
  sdy.mesh @mesh = <["data"=2, "model"=4]>
  func.func @main(%x: tensor<16x64xf32>