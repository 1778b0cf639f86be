¾*
sdy.mesh"
sym_name2m"
meshr

a
	func.func"
sym_name2main*ß
Ü
*€€À€€€€€@arg0*f32 *
m"

aV
stablehlo.constant€€c*f32",
valueJ#dense<1.000000e+00> : tensor<8xf32>7
stablehlo.multiply€€À€€€€€@€€€À0*f32X
stablehlo.custom_call	€€À€€€€€@€€1*f32" 
call_target_name2sdy_testonly.
stablehlo.abs	€€À€€€€€@€À2*f32
func.return€À0:

*f32"š™™™™™©?2propagate-0db009cf486c