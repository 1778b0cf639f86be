sdy.mesh @m = <["a"=2, "b"=2]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<mesh<["a"=2, "b"=2]>, [{"a"}]>},
                %arg1: tensor<8xf32> {sdy.sharding = #sdy.sharding<mesh<["x"=4]>, [{"x"}]>},
                %arg2: tensor<8xf32> {sdy.sharding = #sdy.sharding<mesh<["x"=4]>, [{"x"}]>})
    -> (tensor<f32> {sdy.sharding = #sdy.sharding<mesh<[], device_ids=[3]>, []>}) {
  %0 = stablehlo.constant dense<1.0> : tensor<f32>
  return %0 : tensor<f32>
}
