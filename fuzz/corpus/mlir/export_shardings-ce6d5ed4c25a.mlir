sdy.mesh @mesh = <["a"=4, "b"=2, "c"=3]>
func.func @main(%arg0: tensor<6x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b", "a"}, {"a":(1)2, ?}]>}, %arg1: tensor<8x12xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"c"}, {"a", "c"}]>}, %arg2: tensor<6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}]>}) -> (tensor<0x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", "b"}, {"c"}]>}) {
  %0 = stablehlo.constant dense<1.0> : tensor<0x8xf32>
  return %0 : tensor<0x8xf32>
}
