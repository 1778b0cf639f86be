è4
sdy.mesh"
sym_name2mesh"
meshr

a

b¯
	func.func"
sym_name2f*

€€À€€€€€@arg0	*f32K
stablehlo.add€€À€€€€€@€€À€€€€€@&€€0	*f32 *
other""
func.return€€0:
	*f32"š™™™™™©?2verify-9aca16ab6a75