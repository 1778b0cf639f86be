¨¥
	func.func"
sym_name2main*ø
õ
€€€€€€€€@arg0*i32?
sdy.constant€@0*i32"
valueJdense<1> : tensor<i32>@
sdy.constant€€1*i32"
valueJdense<1> : tensor<i32>@
sdy.constant€À2*i32"
valueJdense<8> : tensor<i32>ÿ
stablehlo.while€€€€€€€€@€@€€3*i32‚€€3*i32*§
¤
€€€‚€€€€@iterArg*i32
€€‚€€€€@	iterArg_0*i32N
stablehlo.compare€€€‚€€€€@€À€À4*i1"
comparison_directionBLT
stablehlo.return€À*‘

‚€€‚€€€€@iterArg*i32
ƒ€€‚€€€€@	iterArg_0*i32/
stablehlo.add‚€€‚€€€€@€€€À4*i32!
stablehlo.return€Àƒ€€‚€€€€@
func.return€€0:	
*i32"š™™™™™©?2constants-966becbc9524