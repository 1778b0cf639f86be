func.func @f() {
  return
}
sdy.mesh @m = <["a"=2, "b"=2], device_ids=[0, 1, 1, 2]>
