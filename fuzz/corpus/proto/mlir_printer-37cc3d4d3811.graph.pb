™9
sdy.mesh"
sym_name2my mesh"
meshr

a"b

cÛ
	func.func"
sym_name2f*®
«
<€€À€€€€€@arg0*f32 *
my mesh"	

a"b2
c:maxV
stablehlo.custom_call	€€À€€€€€@€€0*f32"
call_target_name2
odd target
func.return€€0:

*f32"š™™™™™©?2mlir_printer-37cc3d4d3811