´4
sdy.mesh"
sym_name2mesh"
meshr

a

b|
	func.func"
sym_name2f*8
6
€€À€€€€€@arg0*f32
func.return	€€À€€€€€@0:$"
*f32
mesh"

a*
a"š™™™™™©?2verify-ecdf69b12cd6