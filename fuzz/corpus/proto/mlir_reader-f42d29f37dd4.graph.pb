÷ô
	func.func"
sym_name2f*Ç
Ä
€€€€€€€€@x	@*f32R
stablehlo.constant€@cst*f32"*
valueJ!dense<0.000000e+00> : tensor<f32>¾
stablehlo.reduce€€€€€€€€@€@€€0*f32"

dimensions*
*u
s
€€€€€€€@*f32
€€€€€€@*f321
stablehlo.add€€€€€€€@€€€€€€@€À*f32
stablehlo.return€À
func.return€€0:

*f32"š™™™™™©?2mlir_reader-f42d29f37dd4