ñî
	func.func"
sym_name2main*Á
¾
€€€€€€€€@arg0*i32E
stablehlo.constant€@0*i32"
valueJdense<1> : tensor<i32>F
stablehlo.constant€€1*i32"
valueJdense<8> : tensor<i32>ş
stablehlo.while€€€€€€€€@€@€À2*i32‚€À2*i32*§
¤
€€À€€€€@iterArg*i32
€À€€€€@	iterArg_0*i32N
stablehlo.compare€€À€€€€@€€€€3*i1"
comparison_directionBLT
stablehlo.return€€*

‚€À€€€€@iterArg*i32
ƒ€À€€€€@	iterArg_0*i32.
stablehlo.add‚€À€€€€@€@€€3*i32!
stablehlo.return€€ƒ€À€€€€@
func.return€À0:	
*i32"š™™™™™©?2constants-247059a1fb9f