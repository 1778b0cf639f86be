»4
sdy.mesh"
sym_name2mesh"
meshr

a

b‚
	func.func"
sym_name2f*U
S
7€€À€€€€€@arg0	*f32 *
mesh""*
b*
a
func.return	€€À€€€€€@0:
	*f32"š™™™™™©?2verify-13aec6543084