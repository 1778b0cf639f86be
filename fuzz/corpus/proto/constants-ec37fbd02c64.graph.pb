®«
	func.func"
sym_name2main*ï
ì
€€€€€€€€@arg0*f32O
sdy.constant€@0*f32",
valueJ#dense<3.000000e+00> : tensor<4xf32>1
stablehlo.add€@€€€€€€€€@€€1*f321
stablehlo.multiply€@€€€À2*f32
func.return€€€À0:

*f32

*f32"š™™™™™©?2constants-ec37fbd02c64