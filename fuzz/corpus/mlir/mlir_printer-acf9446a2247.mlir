module {
  func.func @a() attributes {arr = array<i64: 3, -4>, b1 = true, d = dense<2> : tensor<2x2xi32>, dl = #stablehlo.channel_handle<handle = 1, type = 2>, e = array<i64>, f = -2.500000e-01 : bf16, h = 16 : i32, neg = -5 : i64, s = "q\22\0A\\", sym = @foo, t = tensor<4xf32>, u, z = {a = 1.000000e+00 : f32, b = 2 : i64}} {
    return
  }
}
