°-
sdy.mesh"
sym_name2mesh"
meshr

a
	func.func"
sym_name2main*P
N
2€€À€€€€€@arg0*f32 *

b"

b
func.return	€€À€€€€€@0:

*f32"š™™™™™©?2mesh_import-2b9a3a18c6b7