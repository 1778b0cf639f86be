sdy.mesh @m = <["a"=2]>
func.func @f(%x: tensor<8xf32> {sdy.sharding = #sdy.sharding<@m, [{"a"}>}) {
  return
}
