module @jit_gpt attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=2, "model"=2]>
  func.func public @main(%arg0: tensor<2x16x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}, {}]>}, %arg1: tensor<64xf32>, %arg2: tensor<64x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg3: tensor<64x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg4: tensor<64x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg5: tensor<64x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, %arg6: tensor<64xf32>, %arg7: tensor<64x256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, %arg8: tensor<256x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}) -> (tensor<2x16x64xf32>) {
    %0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%arg0 init: %0) applies stablehlo.add across dimensions = [2] : (tensor<2x16x64xf32>, tensor<f32>) -> tensor<2x16xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<2x16xf32>) -> tensor<2x16x64xf32>
    %3 = stablehlo.subtract %arg0, %2 : tensor<2x16x64xf32>
    %4 = stablehlo.multiply %3, %3 : tensor<2x16x64xf32>
    %5 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %6 = stablehlo.reduce(%4 init: %5) applies stablehlo.add across dimensions = [2] : (tensor<2x16x64xf32>, tensor<f32>) -> tensor<2x16xf32>
    %7 = stablehlo.rsqrt %6 : tensor<2x16xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [0, 1] : (tensor<2x16xf32>) -> tensor<2x16x64xf32>
    %9 = stablehlo.multiply %3, %8 : tensor<2x16x64xf32>
    %10 = stablehlo.broadcast_in_dim %arg1, dims = [2] : (tensor<64xf32>) -> tensor<2x16x64xf32>
    %11 = stablehlo.multiply %9, %10 : tensor<2x16x64xf32>
    %12 = stablehlo.dot_general %11, %arg2, contracting_dims = [2] x [0] : (tensor<2x16x64xf32>, tensor<64x64xf32>) -> tensor<2x16x64xf32>
    %13 = stablehlo.reshape %12 : (tensor<2x16x64xf32>) -> tensor<2x16x4x16xf32>
    %14 = stablehlo.transpose %13, dims = [0, 2, 1, 3] : (tensor<2x16x4x16xf32>) -> tensor<2x4x16x16xf32>
    %15 = stablehlo.dot_general %11, %arg3, contracting_dims = [2] x [0] : (tensor<2x16x64xf32>, tensor<64x64xf32>) -> tensor<2x16x64xf32>
    %16 = stablehlo.reshape %15 : (tensor<2x16x64xf32>) -> tensor<2x16x4x16xf32>
    %17 = stablehlo.transpose %16, dims = [0, 2, 1, 3] : (tensor<2x16x4x16xf32>) -> tensor<2x4x16x16xf32>
    %18 = stablehlo.dot_general %11, %arg4, contracting_dims = [2] x [0] : (tensor<2x16x64xf32>, tensor<64x64xf32>) -> tensor<2x16x64xf32>
    %19 = stablehlo.reshape %18 : (tensor<2x16x64xf32>) -> tensor<2x16x4x16xf32>
    %20 = stablehlo.transpose %19, dims = [0, 2, 1, 3] : (tensor<2x16x4x16xf32>) -> tensor<2x4x16x16xf32>
    %21 = stablehlo.dot_general %14, %17, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3] : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
    %22 = stablehlo.constant dense<-1.000000e+04> : tensor<f32>
    %23 = stablehlo.reduce(%21 init: %22) applies stablehlo.maximum across dimensions = [3] : (tensor<2x4x16x16xf32>, tensor<f32>) -> tensor<2x4x16xf32>
    %24 = stablehlo.broadcast_in_dim %23, dims = [0, 1, 2] : (tensor<2x4x16xf32>) -> tensor<2x4x16x16xf32>
    %25 = stablehlo.subtract %21, %24 : tensor<2x4x16x16xf32>
    %26 = stablehlo.exponential %25 : tensor<2x4x16x16xf32>
    %27 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %28 = stablehlo.reduce(%26 init: %27) applies stablehlo.add across dimensions = [3] : (tensor<2x4x16x16xf32>, tensor<f32>) -> tensor<2x4x16xf32>
    %29 = stablehlo.broadcast_in_dim %28, dims = [0, 1, 2] : (tensor<2x4x16xf32>) -> tensor<2x4x16x16xf32>
    %30 = stablehlo.divide %26, %29 : tensor<2x4x16x16xf32>
    %31 = stablehlo.dot_general %30, %20, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2] : (tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
    %32 = stablehlo.transpose %31, dims = [0, 2, 1, 3] : (tensor<2x4x16x16xf32>) -> tensor<2x16x4x16xf32>
    %33 = stablehlo.reshape %32 : (tensor<2x16x4x16xf32>) -> tensor<2x16x64xf32>
    %34 = stablehlo.dot_general %33, %arg5, contracting_dims = [2] x [0] : (tensor<2x16x64xf32>, tensor<64x64xf32>) -> tensor<2x16x64xf32>
    %35 = stablehlo.add %arg0, %34 : tensor<2x16x64xf32>
    %36 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %37 = stablehlo.reduce(%35 init: %36) applies stablehlo.add across dimensions = [2] : (tensor<2x16x64xf32>, tensor<f32>) -> tensor<2x16xf32>
    %38 = stablehlo.broadcast_in_dim %37, dims = [0, 1] : (tensor<2x16xf32>) -> tensor<2x16x64xf32>
    %39 = stablehlo.subtract %35, %38 : tensor<2x16x64xf32>
    %40 = stablehlo.multiply %39, %39 : tensor<2x16x64xf32>
    %41 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %42 = stablehlo.reduce(%40 init: %41) applies stablehlo.add across dimensions = [2] : (tensor<2x16x64xf32>, tensor<f32>) -> tensor<2x16xf32>
    %43 = stablehlo.rsqrt %42 : tensor<2x16xf32>
    %44 = stablehlo.broadcast_in_dim %43, dims = [0, 1] : (tensor<2x16xf32>) -> tensor<2x16x64xf32>
    %45 = stablehlo.multiply %39, %44 : tensor<2x16x64xf32>
    %46 = stablehlo.broadcast_in_dim %arg6, dims = [2] : (tensor<64xf32>) -> tensor<2x16x64xf32>
    %47 = stablehlo.multiply %45, %46 : tensor<2x16x64xf32>
    %48 = stablehlo.dot_general %47, %arg7, contracting_dims = [2] x [0] : (tensor<2x16x64xf32>, tensor<64x256xf32>) -> tensor<2x16x256xf32>
    %49 = stablehlo.tanh %48 : tensor<2x16x256xf32>
    %50 = stablehlo.multiply %48, %49 : tensor<2x16x256xf32>
    %51 = stablehlo.dot_general %50, %arg8, contracting_dims = [2] x [0] : (tensor<2x16x256xf32>, tensor<256x64xf32>) -> tensor<2x16x64xf32>
    %52 = stablehlo.add %35, %51 : tensor<2x16x64xf32>
    return %52 : tensor<2x16x64xf32>
  }
}
