func.func @a() {
  return
}
// -----
func.func @b() {
  return %x : tensor<f32>
}
// -----
func.func @c() {
  return
}
