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
mesh""2
b2
a
func.return	€€À€€€€€@0:
	*f32"š™™™™™©?2verify-f7c233abf317