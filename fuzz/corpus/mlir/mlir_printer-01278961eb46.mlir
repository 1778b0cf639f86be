func.func @a() attributes {z = {b = 2, a = 1.0 : f32}, s = "q\"\n\\", d = dense<[[2, 2], [2, 2]]> : tensor<2x2xi32>, arr = array<i64: 3, -4>, e = array<i64>,
  h = 0x10 : i32, u, neg = -5, sym = @foo, t = tensor<4xf32>, b1 = 1 : i1,
  dl = #stablehlo.channel_handle< handle = 1 ,
 type = 2 >, f = -0.25 : bf16} {
  return
}
