module {
  sdy.mesh @mesh = <["x"=3, "y"=2, "z2"=1]>
  func.func @same_named_computations_one_with_no_out_sharding_one_fully_replicated(%arg0: tensor<6x2xi32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) -> (tensor<6x2xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {"z2"}]>}) {
    %0 = sdy.sharding_constraint %arg0 <@mesh, [{"y", "x"}p2, {}]> : tensor<6x2xi32>
    %1 = sdy.sharding_constraint %0 <@mesh, [{"x"}, {?}p0]> : tensor<6x2xi32>
    %2 = sdy.sharding_constraint %1 <@mesh, [{}, {"x", "z2"}], replicated={"y"}> : tensor<6x2xi32>
    %3 = sdy.named_computation<"baz">(%2) in_shardings=[<@mesh, [{}, {"y"}]>] out_shardings=[<@mesh, [{}, {}]>] (%arg1: tensor<6x2xi32>) {
      %10 = stablehlo.multiply %arg1, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{?}, {"y", "x"}]>]>} : tensor<6x2xi32>
      sdy.return %10 : tensor<6x2xi32>
    } : (tensor<6x2xi32>) -> tensor<6x2xi32>
    %4 = sdy.sharding_constraint %3 <@mesh, [{"y"}, {}]> : tensor<6x2xi32>
    %5 = sdy.sharding_constraint %4 <@mesh, [{"z2", ?}, {}]> : tensor<6x2xi32>
    %6 = sdy.sharding_constraint %5 <@mesh, [{"y", ?}p2, {}]> : tensor<6x2xi32>
    %7 = sdy.named_computation<"baz">(%2) in_shardings=[<@mesh, [{}, {"y"}]>] (%arg1: tensor<6x2xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y", ?}, {}]>}) {
      %10 = stablehlo.multiply %arg1, %arg1 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", ?}, {?}]>]>} : tensor<6x2xi32>
      sdy.return %arg1 : tensor<6x2xi32>
    } : (tensor<6x2xi32>) -> tensor<6x2xi32>
    %8 = sdy.sharding_constraint %7 <@mesh, [{"z2"}, {"x"}], replicated={"y"}> : tensor<6x2xi32>
    %9 = stablehlo.add %6, %8 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"y"}p2, {"x"}]>]>} : tensor<6x2xi32>
    return %9 : tensor<6x2xi32>
  }
}
