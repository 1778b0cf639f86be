¢4
sdy.mesh"
sym_name2mesh"
meshr

a

bé
	func.func"
sym_name2main*¹
¶
€€À€€€€€@arg0*f32
€À€€€€€@arg1*i32Œ
stablehlo.while€€À€€€€€@€À€€€€€@€€0*f32‚€€0*i32*¯
¬
€€€€€€€@iterArg*f32
€€€€€€@	iterArg_0*i32S
stablehlo.compare€€€€€€@€€€€€€@€À3*i1"
comparison_directionBLT
stablehlo.return€À*
Š
‚€€€€€€@iterArg*f32
ƒ€€€€€€@	iterArg_0*i32K
sdy.sharding_constraint	‚€€€€€€@%€À3*f32 *
mesh"

a,
stablehlo.negate€À€€4*f32-
stablehlo.add€€€À€À5*f32!
stablehlo.return€Àƒ€€€€€€@.
sdy.data_flow_edge€€€À1*f32+
sdy.data_flow_edge‚€€€€2*i32
func.return€À0:

*f32"š™™™™™©?2!sharding_constraints-4d790c724de5