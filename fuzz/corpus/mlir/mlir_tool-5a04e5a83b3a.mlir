module {
  func.func @a() {
    return
  }
}
// -----
// -----
module {
  func.func @c() {
    return
  }
}
