module {
  sdy.mesh @mesh = <["a"=2, "b"=2]>
  func.func @f(%arg0: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", ?}, {"b":(1)2}p1], replicated={"b":(2)1}>}) -> (tensor<16x16xf32> {jax.result_info = "r"}) {
    %cst = stablehlo.constant dense<[[1.000000e200, 2.000000e+00]]> : tensor<1x2xf32>
    %0 = stablehlo.divide %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}, {}]>]>} : tensor<16x16xf32>
    %1 = stablehlo.dot_general %0, %arg0, batching_dims = [0] x [0], contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16xf32>
    %2 = stablehlo.custom_call @foo(%0) {backend_config = "x\22y", sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=8} reduction={j}, custom>} : (tensor<16x16xf32>) -> tensor<16x16xf32>
    %3 = sdy.sharding_constraint %2 <@mesh, [{?}, {"b"}]> : tensor<16x16xf32>
    return %3 : tensor<16x16xf32>
  }
}
