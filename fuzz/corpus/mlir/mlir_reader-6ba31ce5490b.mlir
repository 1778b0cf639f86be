func.func @f() attributes {x = "a\qb"} {
  return
}
