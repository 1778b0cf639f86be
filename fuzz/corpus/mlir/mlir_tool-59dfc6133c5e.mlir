func.func @f(%a: tensor<4xf32> {sdy.sharding = #sdy.sharding<@nowhere, [{"a"}]>}) {
  return
}
