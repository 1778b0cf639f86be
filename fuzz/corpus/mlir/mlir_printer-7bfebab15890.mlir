func.func @f(%x: tensor<4xi32>, %y: tensor<4xf32>) -> tensor<4xi32> {
  %a = stablehlo.constant dense<1> : tensor<4xi32>
  %b = stablehlo.constant dense<2> : tensor<4xi32>
  %f = stablehlo.constant dense<1.5> : tensor<4xf32>
  %s = stablehlo.add %x, %a : tensor<4xi32>
  %w:2 = stablehlo.while(%i = %s, %j = %b) : tensor<4xi32>, tensor<4xi32>
   cond {
    %t = stablehlo.constant dense<true> : tensor<i1>
    stablehlo.return %t : tensor<i1>
  } do {
    %u = stablehlo.add %i, %j : tensor<4xi32>
    stablehlo.return %u, %j : tensor<4xi32>, tensor<4xi32>
  }
  %r = stablehlo.multiply %w#0, %w#1 : tensor<4xi32>
  %st, %bits = stablehlo.rng_bit_generator %r, algorithm = DEFAULT : (tensor<4xi32>) -> (tensor<4xi32>, tensor<2xui32>)
  return %st : tensor<4xi32>
}
