º4
sdy.mesh"
sym_name2mesh"
meshr

a

b
	func.func"
sym_name2f*T
R
6€€À€€€€€@arg0	*f32 *
mesh"

a"
func.return	€€À€€€€€@0:
	*f32"š™™™™™©?2verify-631e5eec7be0