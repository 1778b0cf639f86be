ï*
sdy.mesh"
sym_name2m"
meshr

aÀ
	func.func"
sym_name2f*“

€€À€€€€€@arg0*f32]
x.three	€€À€€€€€@€€0*f32‚€€0	*f32ƒ€€0B!stablehlo.token
func.return€€0:

*f32"š™™™™™©?2mlir_printer-607d1967ef4f