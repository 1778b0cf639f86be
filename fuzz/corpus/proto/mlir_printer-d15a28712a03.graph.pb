Ô4
sdy.mesh"
sym_name2mesh"
meshr

a

b›
	func.func"
sym_name2f*n
l
€€À€€€€€@arg0	*f328
stablehlo.add€€À€€€€€@€€À€€€€€@€€0	*f32
func.return€€0:
	*f32"š™™™™™©?2mlir_printer-d15a28712a03