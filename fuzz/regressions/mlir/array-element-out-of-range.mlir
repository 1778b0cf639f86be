func.func @f(%a: tensor<8x16xf32>) -> tensor<8x8xf32> {
  %0 = "stablehlo.slice"(%a) {start_indices = array<i8: 0, 300>, limit_indices = array<i64: 8, 16>, strides = array<i64: 1, 2>} : (tensor<8x16xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
