£-
sdy.mesh"
sym_name2mesh"
meshr

añ
	func.func"
sym_name2main*Á
¾
€€À€€€€€@arg0*f32P
sdy.constant€€0*f32",
valueJ#dense<1.000000e+00> : tensor<8xf32>2
stablehlo.add€€€€À€€€€€@€À1*f32,
stablehlo.negate€À€€2*f32.
stablehlo.abs	€€À€€€€€@€À3*f32S
stablehlo.custom_call€€"
call_target_name2side_effect"
has_side_effectR
stablehlo.custom_call	€€À€€€€€@€À4*f32"
call_target_name2opaque
func.return€À0:

*f32"š™™™™™©?2export_shardings-5bead9789ea9