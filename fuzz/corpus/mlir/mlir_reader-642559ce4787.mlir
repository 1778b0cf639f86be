sdy.mesh @mesh = <["a"=2]>
func.func @f(%p: tensor<i32>, %x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %w:2 = stablehlo.while(%it = %x, %n = %c) : tensor<8xf32>, tensor<i32>
    cond {
    %b = stablehlo.compare  LT, %n, %c : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %b : tensor<i1>
  } do {
    %y = stablehlo.add %it, %it : tensor<8xf32>
    stablehlo.return %y, %n : tensor<8xf32>, tensor<i32>
  }
  %k:2 = "stablehlo.case"(%p) ({
    stablehlo.return %w#0, %x : tensor<8xf32>, tensor<8xf32>
  }, {
    stablehlo.return %x, %w#0 : tensor<8xf32>, tensor<8xf32>
  }) : (tensor<i32>) -> (tensor<8xf32>, tensor<8xf32>)
  %mc = sdy.manual_computation(%k#1) in_shardings=[<@mesh, [{"a"}]>] out_shardings=[<@mesh, [{"a"}]>]
      manual_axes={"a"} (%arg1: tensor<4xf32>) {
    sdy.return %arg1 : tensor<4xf32>
  } : (tensor<8xf32>) -> tensor<8xf32>
  return %k#0, %mc : tensor<8xf32>, tensor<8xf32>
}
