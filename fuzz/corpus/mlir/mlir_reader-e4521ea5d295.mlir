func.func @f(%x: tensor<8xf32>) {
  stablehlo.custom_call @g(%x) {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i]) {i=2}>} : (tensor<8xf32>) -> ()
  return
}
