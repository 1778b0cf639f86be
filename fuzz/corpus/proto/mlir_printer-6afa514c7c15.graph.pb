‚ÿ
	func.func"
sym_name2f*Ò
Ï
€€€€€€€€@arg0*i32
€€€€€€€@arg1*f32J
stablehlo.constant€@c*i32"!
valueJdense<1> : tensor<4xi32>M
stablehlo.constant€€c_0*i32"!
valueJdense<2> : tensor<4xi32>X
stablehlo.constant€Àcst*f32",
valueJ#dense<1.500000e+00> : tensor<4xf32>1
stablehlo.add€€€€€€€€@€@€€0*i32
stablehlo.while€€€€€À1*i32‚€À1*i32*¨
¥
€€À‚€€€€@iterArg*i32
€À‚€€€€@	iterArg_1*i32I
stablehlo.constant€€c_2*i1"!
valueJdense<true> : tensor<i1>
stablehlo.return€€*Ÿ
œ
‚€À‚€€€€@iterArg*i32
ƒ€À‚€€€€@	iterArg_1*i327
stablehlo.add‚€À‚€€€€@ƒ€À‚€€€€@€€3*i32!
stablehlo.return€€ƒ€À‚€€€€@2
stablehlo.multiply€À‚€À€€2*i32
stablehlo.rng_bit_generator€€€Àoutput_state*i32‚€Àoutput	*ui32"2
rng_algorithmJ!#stablehlo<rng_algorithm DEFAULT>
func.return€À0:

*i32"š™™™™™©?2mlir_printer-6afa514c7c15