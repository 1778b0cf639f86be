¦£
	func.func"
sym_name2r*ê
ç
€€€€€€€€@arg0	@*f32R
stablehlo.constant€@cst*f32"*
valueJ!dense<0.000000e+00> : tensor<f32>¾
stablehlo.reduce€€€€€€€€@€@€€0*f32"

dimensions*
*u
s
€€€€€€€@*f32
€€€€€€@*f321
stablehlo.add€€€€€€€@€€€€€€@€À*f32
stablehlo.return€ÀÔ
stablehlo.reduce€€€€€€€€@€@€À1*f32"

dimensions*
*Š
‡
€€À‚€€€€@arg1*f32
€À‚€€€€@arg2*f329
stablehlo.multiply€À‚€€€€@€€À‚€€€€@€€3*f32
stablehlo.return€€Â
stablehlo.reduce€€€€€€€€@€@€€2*f32"

dimensions*
*y
w
€€€„€€€€@*f32
€€„€€€€@*f325
stablehlo.maximum€€€„€€€€@€€„€€€€@€À*f32
stablehlo.return€À
func.return€€€À0:

*f32

*f32"š™™™™™©?2mlir_printer-da0532989cbc