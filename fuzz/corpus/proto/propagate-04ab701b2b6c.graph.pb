†1
sdy.mesh"
sym_name2m"
meshr

a

bĞ
	func.func"
sym_name2main*Ÿ
œ
€€À€€€€€@arg0	 `*f32F
stablehlo.constant€€0*i32"
valueJdense<0> : tensor<i32>F
stablehlo.constant€À1*i32"
valueJdense<1> : tensor<i32>G
stablehlo.constant€€2*i32" 
valueJdense<32> : tensor<i32>°
stablehlo.while€€À€€€€€@€€€À3	 `*f32‚€À3*i32*«
¨
€€À‚€€€€@iterArg	 `*f32
€À‚€€€€@	iterArg_2*i32N
stablehlo.compare€À‚€€€€@€€€€6*i1"
comparison_directionBLT
stablehlo.return€€*¹
¶
‚€À‚€€€€@iterArg	 `*f32
ƒ€À‚€€€€@	iterArg_2*i32/
stablehlo.addƒ€À‚€€€€@€À€€6*i32Q
stablehlo.add‚€À‚€€€€@‚€À‚€€€€@,€À7	 `*f32 *
m"

a"

bT
stablehlo.custom_call€À€€8	 `*f32" 
call_target_name2sdy_testonly
stablehlo.return€€€€/
sdy.data_flow_edge€À€€4	 `*f32+
sdy.data_flow_edge‚€À€À5*i32
func.return€€0:
	 `*f32"š™™™™™©?2propagate-04ab701b2b6c