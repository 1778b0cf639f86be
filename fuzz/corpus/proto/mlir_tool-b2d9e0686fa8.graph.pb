Î*
sdy.mesh"
sym_name2m"
meshr

aŸ
	func.func"
sym_name2f*s
q
'€€À€€€€€@a*f32 *
m"

a1
stablehlo.negate	€€À€€€€€@€€0*f32
func.return€€0:

*f32"š™™™™™©?2mlir_tool-b2d9e0686fa8