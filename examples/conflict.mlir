// A small module whose propagation meets a conflict: the add's operands are sharded along
// different axes on the same dimension ("data" against "model"), so Shardy cannot pick one
// without resharding. The dashboard's browser test plans it.
sdy.mesh @mesh = <["data"=4, "model"=2]>

func.func @main(%arg0: tensor<64x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>},
                %arg1: tensor<64x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>},
                %arg2: tensor<128x256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}) -> tensor<64x256xf32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<64x128xf32>
  %1 = stablehlo.dot_general %0, %arg2, contracting_dims = [1] x [0] : (tensor<64x128xf32>, tensor<128x256xf32>) -> tensor<64x256xf32>
  %2 = stablehlo.tanh %1 : tensor<64x256xf32>
  return %2 : tensor<64x256xf32>
}
