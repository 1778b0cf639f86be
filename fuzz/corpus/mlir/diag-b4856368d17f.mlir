// expected-error@+1 {{unknown mesh}}
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@nomesh, [{"a"}]>}) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}
