func.func @f() {
  return %x : tensor<f32>
}
