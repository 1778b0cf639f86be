µ4
sdy.mesh"
sym_name2mesh"
meshr

a

b}
	func.func"
sym_name2f*P
N
2€€À€€€€€@arg0	*f32 *
mesh"

c"
func.return	€€À€€€€€@0:
	*f32"š™™™™™©?2verify-58fd42b8b4fc