Ñ*
sdy.mesh"
sym_name2m"
meshr

a¢
	func.func"
sym_name2f*v
t
*€€À€€€€€@arg0*f32 *
m"

a1
stablehlo.negate	€€À€€€€€@€€0*f32
func.return€€0:

*f32"š™™™™™©?2mlir_tool-0c9389104a7f