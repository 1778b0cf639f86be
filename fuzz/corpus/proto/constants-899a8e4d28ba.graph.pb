´±
	func.func"
sym_name2main*õ
ò
€€€€€€€€@arg0*f32U
stablehlo.constant€@0*f32",
valueJ#dense<3.000000e+00> : tensor<4xf32>1
stablehlo.add€@€€€€€€€€@€€1*f321
stablehlo.multiply€@€€€À2*f32
func.return€€€À0:

*f32

*f32"š™™™™™©?2constants-899a8e4d28ba