module {
  sdy.mesh @m = <["a"=2], device_ids=[1, 0]>
  func.func private @decl(tensor<4xf32> {sdy.sharding = #sdy.sharding<@m, [{"a"}]>}, tensor<f32>) -> tensor<4xf32>
  func.func @none(%arg0: tensor<f32>) {
    return
  }
  func.func @one(%arg0: tensor<f32>) -> tensor<f32> attributes {sdy.original_func_name = "x"} {
    return %arg0 : tensor<f32>
  }
  func.func @sharded(%arg0: tensor<4xf32>) -> (tensor<4xf32> {sdy.sharding = #sdy.sharding<@m, [{"a", ?}p0]>}) {
    return %arg0 : tensor<4xf32>
  }
  func.func @two(%arg0: tensor<f32>, %arg1: !stablehlo.token) -> (tensor<f32>, !stablehlo.token) {
    %0 = call @one(%arg0) {sdy.sharding = #sdy.sharding_per_value<[<@m, []>]>} : (tensor<f32>) -> tensor<f32>
    return %0, %arg1 : tensor<f32>, !stablehlo.token
  }
}
