ñ4
sdy.mesh"
sym_name2mesh"
meshr

a

b¸
	func.func"
sym_name2main*ğ
í
€€À€€€€€@arg0*f32
€À€€€€€@arg1*i32
&‚€À€€€€€@arg2B!stablehlo.tokenÆ
stablehlo.while€€À€€€€€@€À€€€€€@‚€À€€€€€@#€€0*f32 *
mesh"

a‚€€0*i32 *
mesh(ƒ€€0B!stablehlo.token *
mesh*Ü
Ù
€€€€€€€@iterArg*f32
€€€€€€@	iterArg_0*i32
+‚€€€€€€@	iterArg_1B!stablehlo.tokenS
stablehlo.compare€€€€€€@€€€€€€@€À2*i1"
comparison_directionBLT
stablehlo.return€À*Ì
É
ƒ€€€€€€@iterArg*f32
„€€€€€€@	iterArg_0*i32
+…€€€€€€@	iterArg_1B!stablehlo.token1
stablehlo.negate	ƒ€€€€€€@€À2*f32*
stablehlo.return€À„€€€€€€@…€€€€€€@,
stablehlo.negate€€€À1*f32
func.return€Àƒ€€0:$

*f32
B!stablehlo.token"š™™™™™©?2data_flow_edges-5cc74c4f2515