func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.custom_call @foo(%x) {sdy.sharding_rule = #sdy.op_sharding_rule<([ij, k])->([z_8z_9]) {i=2, j=4, k=8, l=1, m=1, n=1, o=1, p=1, q=1, r=1, s=1, t=1, u=1, v=1, w=1, x=1, y=1, z=1, z_1=1, z_2=1, z_3=1, z_4=1, z_5=1, z_6=1, z_7=1, z_8=3, z_9=5} reduction={k} need_replication={j} blocked_propagation={i, k}, custom>} : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
