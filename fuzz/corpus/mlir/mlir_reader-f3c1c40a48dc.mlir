sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @f(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a", ?}, {?}]>]>} : tensor<8x8xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{}, {"b"}]> : tensor<8x8xf32>
  %2 = sdy.data_flow_edge %1 sharding=<mesh<["x"=4]>, [{"x":(1)2}, {}]> : tensor<8x8xf32>
  %3 = sdy.reshard %2 <@mesh, [{"a"}, {}], unreduced={"b"}> : tensor<8x8xf32>
  return %3 : tensor<8x8xf32>
}
