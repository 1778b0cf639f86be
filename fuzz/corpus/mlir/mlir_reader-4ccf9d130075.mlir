func.func @f() attributes {x = 1, x = 2} {
  return
}
