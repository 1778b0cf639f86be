¿4
sdy.mesh"
sym_name2mesh"
meshr

a

b†
	func.func"
sym_name2f*Y
W
;€€À€€€€€@arg0	*f32 *
mesh"

a"

a
func.return	€€À€€€€€@0:
	*f32"š™™™™™©?2verify-08dad9072d22