¦£
	func.func"
sym_name2r*ê
ç
€€€€€€€€@x	@*f32P
stablehlo.constant€@z*f32"*
valueJ!dense<0.000000e+00> : tensor<f32>¾
stablehlo.reduce€€€€€€€€@€@€€0*f32"

dimensions*
*u
s
€€€€€€€@*f32
€€€€€€@*f321
stablehlo.add€€€€€€€@€€€€€€@€À*f32
stablehlo.return€ÀÎ
stablehlo.reduce€€€€€€€€@€@€À1*f32"

dimensions*
*„

€€À‚€€€€@a*f32
€À‚€€€€@b*f329
stablehlo.multiply€À‚€€€€@€€À‚€€€€@€€m*f32
stablehlo.return€€Í
stablehlo.reduce€€€€€€€€@€@€€2*f32"

dimensions*
*ƒ
€
€€€„€€€€@a*f32
€€„€€€€@b*f328
stablehlo.maximum€€€„€€€€@€€„€€€€@€Àm*f32
stablehlo.return€À
func.return€€€À0:

*f32

*f32"š™™™™™©?2mlir_printer-cec55929d3ca