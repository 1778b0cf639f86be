sdy.mesh @mesh = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = sdy.named_computation<"f">(%arg0) in_shardings=[<@mesh, [{"a"}]>] out_shardings=[<@mesh, [{"a"}]>] (%arg1: tensor<8xf32>) {
    %3 = sdy.named_computation<"g">(%arg1) in_shardings=[<@mesh, [{"a"}]>] out_shardings=[<@mesh, [{"a"}]>] (%arg2: tensor<8xf32>) {
      %4 = stablehlo.abs %arg2 : tensor<8xf32>
      sdy.return %4 : tensor<8xf32>
    } : (tensor<8xf32>) -> tensor<8xf32>
    sdy.return %3 : tensor<8xf32>
  } : (tensor<8xf32>) -> tensor<8xf32>
  %1 = sdy.named_computation<"g">(%0) in_shardings=[<@mesh, [{"a"}]>] out_shardings=[<@mesh, [{"a"}]>] (%arg1: tensor<8xf32>) {
    %4 = stablehlo.abs %arg1 : tensor<8xf32>
    sdy.return %4 : tensor<8xf32>
  } : (tensor<8xf32>) -> tensor<8xf32>
  %2 = sdy.named_computation<"g">(%0) in_shardings=[<@mesh, [{"b"}]>] out_shardings=[<@mesh, [{"b"}]>] (%arg1: tensor<8xf32>) {
    %4 = stablehlo.abs %arg1 : tensor<8xf32>
    sdy.return %4 : tensor<8xf32>
  } : (tensor<8xf32>) -> tensor<8xf32>
  return %1, %2 : tensor<8xf32>, tensor<8xf32>
}
