module {
  sdy.mesh @mesh = <["a"=2, "b"=4]>
  func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {"b", ?}]>}, %arg1: tensor<16x4xf32>, %arg2: tensor<i32>, %arg3: tensor<8xi1>) -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a", ?}, {?}]>}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a", ?}, {?}]>]>} : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
    %1 = stablehlo.abs %0 : tensor<8x4xf32>
    %2 = stablehlo.add %0, %1 : tensor<8x4xf32>
    %3 = stablehlo.broadcast_in_dim %arg2, dims = [] : (tensor<i32>) -> tensor<8x4xi32>
    %4 = stablehlo.convert %3 : (tensor<8x4xi32>) -> tensor<8x4xf32>
    %5 = stablehlo.transpose %4, dims = [1, 0] : (tensor<8x4xf32>) -> tensor<4x8xf32>
    %6 = stablehlo.reshape %5 : (tensor<4x8xf32>) -> tensor<8x4xf32>
    %7 = stablehlo.compare  GE, %6, %2,  FLOAT : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xi1>
    %8 = stablehlo.select %7, %6, %2 : tensor<8x4xi1>, tensor<8x4xf32>
    %9 = stablehlo.slice %8 [0:8:2, 1:4] : (tensor<8x4xf32>) -> tensor<4x3xf32>
    %10 = stablehlo.concatenate %9, %9, dim = 0 : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<8x3xf32>
    %11 = stablehlo.reverse %10, dims = [0] : tensor<8x3xf32>
    %12 = stablehlo.iota dim = 0 : tensor<8xi32>
    %13 = stablehlo.dynamic_slice %11, %arg2, %arg2, sizes = [2, 3] : (tensor<8x3xf32>, tensor<i32>, tensor<i32>) -> tensor<2x3xf32>
    %14 = stablehlo.pad %13, %1, low = [0, 1], high = [1, 0], interior = [0, 0] : (tensor<2x3xf32>, tensor<8x4xf32>) -> tensor<3x4xf32>
    %15 = stablehlo.clamp %1, %0, %1 : tensor<8x4xf32>
    %16:2 = stablehlo.optimization_barrier %0, %arg2 : tensor<8x4xf32>, tensor<i32>
    %17 = stablehlo.custom_call @foo(%16#0) {backend_config = "", has_side_effect = true, sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=4} reduction={j}, custom>} : (tensor<8x4xf32>) -> tensor<8x4xf32>
    %18 = stablehlo.after_all : !stablehlo.token
    %19 = stablehlo.fft %17, type = RFFT, length = [4] : (tensor<8x4xf32>) -> tensor<8x3xcomplex<f32>>
    %20 = stablehlo.real %19 : (tensor<8x3xcomplex<f32>>) -> tensor<8x3xf32>
    %21 = stablehlo.complex %20, %20 : tensor<8x3xcomplex<f32>>
    %22 = stablehlo.dot %arg0, %arg1, precision = [HIGH, HIGH] : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
    return %22 : tensor<8x4xf32>
  }
}
