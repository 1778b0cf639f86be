#loc1 = loc("x.py":3:4)
#sh = #sdy.sharding<@mesh, [{"a"}]>
// a comment
module @jit_f attributes {mhlo.num_partitions = 8 : i32} {
  sdy.mesh @mesh = <["a"=2]> loc(#loc1)
  func.func public @main(%arg0: tensor<4xf32> {sdy.sharding = #sh} loc("x.py":1:1)) -> tensor<4xf32> {
    %0 = stablehlo.negate %arg0 : tensor<4xf32> loc(callsite("a"("b":1:2) at "c":3:4))
    return %0 : tensor<4xf32> // trailing comment
  } loc(unknown)
} loc(unknown)
