module {
  sdy.mesh @mesh = <["a"=2, "b"=2]>
  sdy.mesh @maximal = <[], device_ids=[0]>
  func.func @s(%arg0: tensor<16x32xf32>, %arg1: tensor<16x32xf32>) -> tensor<16x32xf32> {
    %0 = sdy.propagation_barrier %arg0 allowed_direction=BACKWARD : tensor<16x32xf32>
    sdy.sharding_group %0 group_id=3 : tensor<16x32xf32>
    %1 = sdy.data_flow_edge %0 sharding=<@mesh, [{"a", ?}, {?}]> : tensor<16x32xf32>
    %2 = sdy.func_data_flow_edge %1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}, {"b", ?}]>]>} : tensor<16x32xf32>
    %3 = sdy.constant {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}, {}]>]>} dense<1.000000e+00> : tensor<16x32xf32>
    %4 = sdy.all_reduce {"b"} %3 out_sharding=<@mesh, [{"a"}, {}]> : tensor<16x32xf32>
    %5 = sdy.manual_computation(%4, %arg1) in_shardings=[<@mesh, [{"a"}, {}]>, <@mesh, [{"a"}, {}]>] out_shardings=[<@mesh, [{"a"}, {}]>] manual_axes={"a"} (%arg2: tensor<8x32xf32>, %arg3: tensor<8x32xf32>) {
      %8 = stablehlo.add %arg2, %arg3 : tensor<8x32xf32>
      sdy.return %8 : tensor<8x32xf32>
    } : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
    %6 = sdy.named_computation<"foo">(%5) in_shardings=[<@mesh, [{"a"}, {}]>] out_shardings=[<@mesh, [{}, {"b"}]>] (%arg2: tensor<16x32xf32>) {
      sdy.return %arg2 : tensor<16x32xf32>
    } : (tensor<16x32xf32>) -> tensor<16x32xf32>
    %7 = sdy.reshard %6 <mesh<["x"=4]>, [{}, {"x":(2)2}], replicated={"x":(1)2}, unreduced={"b"}> : tensor<16x32xf32>
    stablehlo.custom_call @cb(%7) {has_side_effect = true, sdy.sharding = #sdy.sharding_per_value<[<@maximal, []>]>} : (tensor<16x32xf32>) -> ()
    return %7 : tensor<16x32xf32>
  }
}
