module @jit_gpt attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=2, "model"=2]>
  func.func public @main(%arg0: tensor<2x8x32xf32>, %arg1: tensor<32xf32>, %arg2: tensor<32x32xf32>, %arg3: tensor<32x32xf32>, %arg4: tensor<32x32xf32>, %arg5: tensor<32x32xf32>, %arg6: tensor<32xf32>, %arg7: tensor<32x128xf32>, %arg8: tensor<128x32xf32>) -> (tensor<2x8x32xf32>, tensor<2x8x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x128xf32>, tensor<128x32xf32>) {
    %0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%arg0 init: %0) applies stablehlo.add across dimensions = [2] : (tensor<2x8x32xf32>, tensor<f32>) -> tensor<2x8xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<2x8xf32>) -> tensor<2x8x32xf32>
    %3 = stablehlo.subtract %arg0, %2 : tensor<2x8x32xf32>
    %4 = stablehlo.multiply %3, %3 : tensor<2x8x32xf32>
    %5 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %6 = stablehlo.reduce(%4 init: %5) applies stablehlo.add across dimensions = [2] : (tensor<2x8x32xf32>, tensor<f32>) -> tensor<2x8xf32>
    %7 = stablehlo.rsqrt %6 : tensor<2x8xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [0, 1] : (tensor<2x8xf32>) -> tensor<2x8x32xf32>
    %9 = stablehlo.multiply %3, %8 : tensor<2x8x32xf32>
    %10 = stablehlo.broadcast_in_dim %arg1, dims = [2] : (tensor<32xf32>) -> tensor<2x8x32xf32>
    %11 = stablehlo.multiply %9, %10 : tensor<2x8x32xf32>
    %12 = stablehlo.dot_general %11, %arg2, contracting_dims = [2] x [0] : (tensor<2x8x32xf32>, tensor<32x32xf32>) -> tensor<2x8x32xf32>
    %13 = stablehlo.reshape %12 : (tensor<2x8x32xf32>) -> tensor<2x8x2x16xf32>
    %14 = stablehlo.transpose %13, dims = [0, 2, 1, 3] : (tensor<2x8x2x16xf32>) -> tensor<2x2x8x16xf32>
    %15 = stablehlo.dot_general %11, %arg3, contracting_dims = [2] x [0] : (tensor<2x8x32xf32>, tensor<32x32xf32>) -> tensor<2x8x32xf32>
    %16 = stablehlo.reshape %15 : (tensor<2x8x32xf32>) -> tensor<2x8x2x16xf32>
    %17 = stablehlo.transpose %16, dims = [0, 2, 1, 3] : (tensor<2x8x2x16xf32>) -> tensor<2x2x8x16xf32>
    %18 = stablehlo.dot_general %11, %arg4, contracting_dims = [2] x [0] : (tensor<2x8x32xf32>, tensor<32x32xf32>) -> tensor<2x8x32xf32>
    %19 = stablehlo.reshape %18 : (tensor<2x8x32xf32>) -> tensor<2x8x2x16xf32>
    %20 = stablehlo.transpose %19, dims = [0, 2, 1, 3] : (tensor<2x8x2x16xf32>) -> tensor<2x2x8x16xf32>
    %21 = stablehlo.dot_general %14, %17, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3] : (tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) -> tensor<2x2x8x8xf32>
    %22 = stablehlo.constant dense<-1.000000e+04> : tensor<f32>
    %23 = stablehlo.reduce(%21 init: %22) applies stablehlo.maximum across dimensions = [3] : (tensor<2x2x8x8xf32>, tensor<f32>) -> tensor<2x2x8xf32>
    %24 = stablehlo.broadcast_in_dim %23, dims = [0, 1, 2] : (tensor<2x2x8xf32>) -> tensor<2x2x8x8xf32>
    %25 = stablehlo.subtract %21, %24 : tensor<2x2x8x8xf32>
    %26 = stablehlo.exponential %25 : tensor<2x2x8x8xf32>
    %27 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %28 = stablehlo.reduce(%26 init: %27) applies stablehlo.add across dimensions = [3] : (tensor<2x2x8x8xf32>, tensor<f32>) -> tensor<2x2x8xf32>
    %29 = stablehlo.broadcast_in_dim %28, dims = [0, 1, 2] : (tensor<2x2x8xf32>) -> tensor<2x2x8x8xf32>
    %30 = stablehlo.divide %26, %29 : tensor<2x2x8x8xf32>
    %31 = stablehlo.dot_general %30, %20, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2] : (tensor<2x2x8x8xf32>, tensor<2x2x8x16xf32>) -> tensor<2x2x8x16xf32>
    %32 = stablehlo.transpose %31, dims = [0, 2, 1, 3] : (tensor<2x2x8x16xf32>) -> tensor<2x8x2x16xf32>
    %33 = stablehlo.reshape %32 : (tensor<2x8x2x16xf32>) -> tensor<2x8x32xf32>
    %34 = stablehlo.dot_general %33, %arg5, contracting_dims = [2] x [0] : (tensor<2x8x32xf32>, tensor<32x32xf32>) -> tensor<2x8x32xf32>
    %35 = stablehlo.add %arg0, %34 : tensor<2x8x32xf32>
    %36 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %37 = stablehlo.reduce(%35 init: %36) applies stablehlo.add across dimensions = [2] : (tensor<2x8x32xf32>, tensor<f32>) -> tensor<2x8xf32>
    %38 = stablehlo.broadcast_in_dim %37, dims = [0, 1] : (tensor<2x8xf32>) -> tensor<2x8x32xf32>
    %39 = stablehlo.subtract %35, %38 : tensor<2x8x32xf32>
    %40 = stablehlo.multiply %39, %39 : tensor<2x8x32xf32>
    %41 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %42 = stablehlo.reduce(%40 init: %41) applies stablehlo.add across dimensions = [2] : (tensor<2x8x32xf32>, tensor<f32>) -> tensor<2x8xf32>
    %43 = stablehlo.rsqrt %42 : tensor<2x8xf32>
    %44 = stablehlo.broadcast_in_dim %43, dims = [0, 1] : (tensor<2x8xf32>) -> tensor<2x8x32xf32>
    %45 = stablehlo.multiply %39, %44 : tensor<2x8x32xf32>
    %46 = stablehlo.broadcast_in_dim %arg6, dims = [2] : (tensor<32xf32>) -> tensor<2x8x32xf32>
    %47 = stablehlo.multiply %45, %46 : tensor<2x8x32xf32>
    %48 = stablehlo.dot_general %47, %arg7, contracting_dims = [2] x [0] : (tensor<2x8x32xf32>, tensor<32x128xf32>) -> tensor<2x8x128xf32>
    %49 = stablehlo.tanh %48 : tensor<2x8x128xf32>
    %50 = stablehlo.multiply %48, %49 : tensor<2x8x128xf32>
    %51 = stablehlo.dot_general %50, %arg8, contracting_dims = [2] x [0] : (tensor<2x8x128xf32>, tensor<128x32xf32>) -> tensor<2x8x32xf32>
    %52 = stablehlo.add %35, %51 : tensor<2x8x32xf32>
    %53 = stablehlo.dot_general %50, %52, contracting_dims = [0, 1] x [0, 1] : (tensor<2x8x128xf32>, tensor<2x8x32xf32>) -> tensor<128x32xf32>
    %54 = stablehlo.dot_general %52, %arg8, contracting_dims = [2] x [1] : (tensor<2x8x32xf32>, tensor<128x32xf32>) -> tensor<2x8x128xf32>
    %55 = stablehlo.multiply %54, %49 : tensor<2x8x128xf32>
    %56 = stablehlo.dot_general %47, %55, contracting_dims = [0, 1] x [0, 1] : (tensor<2x8x32xf32>, tensor<2x8x128xf32>) -> tensor<32x128xf32>
    %57 = stablehlo.dot_general %55, %arg7, contracting_dims = [2] x [1] : (tensor<2x8x128xf32>, tensor<32x128xf32>) -> tensor<2x8x32xf32>
    %58 = stablehlo.multiply %57, %44 : tensor<2x8x32xf32>
    %59 = stablehlo.add %52, %58 : tensor<2x8x32xf32>
    %60 = stablehlo.dot_general %33, %59, contracting_dims = [0, 1] x [0, 1] : (tensor<2x8x32xf32>, tensor<2x8x32xf32>) -> tensor<32x32xf32>
    %61 = stablehlo.dot_general %59, %arg5, contracting_dims = [2] x [1] : (tensor<2x8x32xf32>, tensor<32x32xf32>) -> tensor<2x8x32xf32>
    %62 = stablehlo.reshape %61 : (tensor<2x8x32xf32>) -> tensor<2x8x2x16xf32>
    %63 = stablehlo.transpose %62, dims = [0, 2, 1, 3] : (tensor<2x8x2x16xf32>) -> tensor<2x2x8x16xf32>
    %64 = stablehlo.dot_general %63, %20, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3] : (tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) -> tensor<2x2x8x8xf32>
    %65 = stablehlo.dot_general %30, %63, batching_dims = [0, 1] x [0, 1], contracting_dims = [2] x [2] : (tensor<2x2x8x8xf32>, tensor<2x2x8x16xf32>) -> tensor<2x2x8x16xf32>
    %66 = stablehlo.multiply %64, %30 : tensor<2x2x8x8xf32>
    %67 = stablehlo.dot_general %66, %17, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2] : (tensor<2x2x8x8xf32>, tensor<2x2x8x16xf32>) -> tensor<2x2x8x16xf32>
    %68 = stablehlo.dot_general %66, %14, batching_dims = [0, 1] x [0, 1], contracting_dims = [2] x [2] : (tensor<2x2x8x8xf32>, tensor<2x2x8x16xf32>) -> tensor<2x2x8x16xf32>
    %69 = stablehlo.transpose %67, dims = [0, 2, 1, 3] : (tensor<2x2x8x16xf32>) -> tensor<2x8x2x16xf32>
    %70 = stablehlo.reshape %69 : (tensor<2x8x2x16xf32>) -> tensor<2x8x32xf32>
    %71 = stablehlo.dot_general %11, %70, contracting_dims = [0, 1] x [0, 1] : (tensor<2x8x32xf32>, tensor<2x8x32xf32>) -> tensor<32x32xf32>
    %72 = stablehlo.dot_general %70, %arg2, contracting_dims = [2] x [1] : (tensor<2x8x32xf32>, tensor<32x32xf32>) -> tensor<2x8x32xf32>
    %73 = stablehlo.transpose %68, dims = [0, 2, 1, 3] : (tensor<2x2x8x16xf32>) -> tensor<2x8x2x16xf32>
    %74 = stablehlo.reshape %73 : (tensor<2x8x2x16xf32>) -> tensor<2x8x32xf32>
    %75 = stablehlo.dot_general %11, %74, contracting_dims = [0, 1] x [0, 1] : (tensor<2x8x32xf32>, tensor<2x8x32xf32>) -> tensor<32x32xf32>
    %76 = stablehlo.dot_general %74, %arg3, contracting_dims = [2] x [1] : (tensor<2x8x32xf32>, tensor<32x32xf32>) -> tensor<2x8x32xf32>
    %77 = stablehlo.add %72, %76 : tensor<2x8x32xf32>
    %78 = stablehlo.transpose %65, dims = [0, 2, 1, 3] : (tensor<2x2x8x16xf32>) -> tensor<2x8x2x16xf32>
    %79 = stablehlo.reshape %78 : (tensor<2x8x2x16xf32>) -> tensor<2x8x32xf32>
    %80 = stablehlo.dot_general %11, %79, contracting_dims = [0, 1] x [0, 1] : (tensor<2x8x32xf32>, tensor<2x8x32xf32>) -> tensor<32x32xf32>
    %81 = stablehlo.dot_general %79, %arg4, contracting_dims = [2] x [1] : (tensor<2x8x32xf32>, tensor<32x32xf32>) -> tensor<2x8x32xf32>
    %82 = stablehlo.add %77, %81 : tensor<2x8x32xf32>
    %83 = stablehlo.multiply %82, %8 : tensor<2x8x32xf32>
    %84 = stablehlo.add %59, %83 : tensor<2x8x32xf32>
    return %52, %84, %71, %75, %80, %60, %56, %53 : tensor<2x8x32xf32>, tensor<2x8x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x128xf32>, tensor<128x32xf32>
  }
}
