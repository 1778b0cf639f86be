
func.func @f() {
  return %zz : tensor<f32>
}
