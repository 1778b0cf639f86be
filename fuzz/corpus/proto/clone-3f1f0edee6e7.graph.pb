ê-
sdy.mesh"
sym_name2mesh"
meshr

a¸
	func.func"
sym_name2main*ˆ
…
€€À€€€€€@arg0*f32
€À€€€€€@arg1*i32¸
stablehlo.while€€À€€€€€@€À€€€€€@%€€0*f32 *
mesh"

a‚€€0*i32 *
mesh*¯
¬
€€€€€€€@iterArg*f32
€€€€€€@	iterArg_0*i32S
stablehlo.compare€€€€€€@€À€€€€€@€À1*i1"
comparison_directionBLT
stablehlo.return€À*œ
™
‚€€€€€€@iterArg*f32
ƒ€€€€€€@	iterArg_0*i327
stablehlo.add‚€€€€€€@€€À€€€€€@€À1*f32!
stablehlo.return€Àƒ€€€€€€@
func.return€€0:

*f32"š™™™™™©?2clone-3f1f0edee6e7