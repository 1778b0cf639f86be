Ê4
sdy.mesh"
sym_name2mesh"
meshr

a

b‘
	func.func"
sym_name2main*á
Ş
€€À€€€€€@arg0*f32
€À€€€€€@arg1*i32‘
stablehlo.while€€À€€€€€@€À€€€€€@€€0*f32‚€€0*i32*¯
¬
€€€€€€€@iterArg*f32
€€€€€€@	iterArg_0*i32S
stablehlo.compare€€€€€€@€€€€€€@€À1*i1"
comparison_directionBLT
stablehlo.return€À*’

‚€€€€€€@iterArg*f32
ƒ€€€€€€@	iterArg_0*i321
stablehlo.negate	‚€€€€€€@€À1*f32K
sdy.sharding_constraint	‚€€€€€€@%€€2*f32 *
mesh"

a-
stablehlo.add€À€€€À3*f32!
stablehlo.return€Àƒ€€€€€€@
func.return€€0:

*f32"š™™™™™©?2!sharding_constraints-9401c8dda135