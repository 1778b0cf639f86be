module {
  sdy.mesh @mesh = <["a"=2, "b"=2, "c"=2]>
  func.func private @g(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) -> tensor<8x16xf32> {
    return %arg0 : tensor<8x16xf32>
  }
  func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {"b", "c"}]>}, %arg1: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b", "c"}, {}]>}) -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}, tensor<8x16xf32>) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}, {}], unreduced={"b", "c"}>]>} : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
    %1 = sdy.all_reduce {"b"} %0 out_sharding=<@mesh, [{"a"}, {}], unreduced={"c"}> : tensor<8x16xf32>
    %2 = sdy.reshard %1 <@mesh, [{"a"}, {}], unreduced={"c"}> : tensor<8x16xf32>
    %3 = stablehlo.add %2, %2 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}, {}], unreduced={"c"}>]>} : tensor<8x16xf32>
    %4 = sdy.reshard %arg1 <@mesh, [{"a"}, {}]> : tensor<8x16xf32>
    %5 = call @g(%4) : (tensor<8x16xf32>) -> tensor<8x16xf32>
    %6 = sdy.all_reduce {"c"} %3 out_sharding=<@mesh, [{"a"}, {}]> : tensor<8x16xf32>
    return %6, %5 : tensor<8x16xf32>, tensor<8x16xf32>
  }
}
