ÎË
	func.func"
sym_name2f*
›
€€€€€€€€@x*i32
€€€€€€€@y*f32J
stablehlo.constant€@a*i32"!
valueJdense<1> : tensor<4xi32>K
stablehlo.constant€€b*i32"!
valueJdense<2> : tensor<4xi32>V
stablehlo.constant€Àf*f32",
valueJ#dense<1.500000e+00> : tensor<4xf32>1
stablehlo.add€€€€€€€€@€@€€s*i32ò
stablehlo.while€€€€€Àw*i32‚€Àw*i32*˜
•
€€À‚€€€€@i*i32
€À‚€€€€@j*i32G
stablehlo.constant€€t*i1"!
valueJdense<true> : tensor<i1>
stablehlo.return€€*‘

‚€À‚€€€€@i*i32
ƒ€À‚€€€€@j*i327
stablehlo.add‚€À‚€€€€@ƒ€À‚€€€€@€€u*i32!
stablehlo.return€€ƒ€À‚€€€€@2
stablehlo.multiply€À‚€À€€r*i32„
stablehlo.rng_bit_generator€€€Àst*i32‚€Àbits	*ui32"2
rng_algorithmJ!#stablehlo<rng_algorithm DEFAULT>
func.return€À0:

*i32"š™™™™™©?2mlir_printer-7bfebab15890