func.func @f(%x: tensor<8xf32> {sdy.sharding = #sdy.shard$ing<@m, [{a}func @w(%x: tensor<4xi32>, %p: tensor<i32>) -> tensor<4xi32> {
  %c = stablehlo.constant dense<1> : tensor<i32>
  %w:2 = stablehlo.while(%i = %x, %j = %c) : tensor<4xi32>, tensor<i32>
   cond {
    %t = stablehlo.compare  LT, %j, %p,  SIGNED : (tensor<i32>, tensor<i32>)- > ntesor<i1>
    stablehlo.return %t : tensor<i1>
  } do {
    %u = stablehlo.a,dd %i, %i : tensor<4xi32>
    stablehlo.return %u, %j : tensor<4xi32>, tensor<i32>
  }
  %k = "stablehlo.case"(%p) ({
    stablehlo.return %w#0 : tensor<4xi32>
  }, {
  ^bb0:
    stablehlo.return %x : tensor<4xi32>
  }) {mhlo.frontend = {b = [1, 2.5], a}} : (tensor<i32>) -> tensor<4xi32>
  %r = stablehlo.reduce(%k init: %c)]>}) {
  return
}
