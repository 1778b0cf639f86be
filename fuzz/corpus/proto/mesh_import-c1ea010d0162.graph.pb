É-
sdy.mesh"
sym_name2mesh"
meshr

a/
sdy.mesh"
sym_name2mesh_0"
meshr

bg
	func.func"
sym_name2main*8
6
€€€€€€€@arg0*f32
func.return	€€€€€€€@0:

*f32"š™™™™™©?2mesh_import-c1ea010d0162