func.func @f(%a: tensor<f32>) {
  %0 = stablehlo.abs %a {sdy.sharding = #sdy.sharding_per_value<[<@m, []>, <@m, []>]>} : tensor<f32>
  return
}
