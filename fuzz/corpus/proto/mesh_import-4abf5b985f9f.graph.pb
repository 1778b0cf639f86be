Ş-
sdy.mesh"
sym_name2mesh"
meshr

a/
sdy.mesh"
sym_name2mesh_0"
meshr

b|
	func.func"
sym_name2main*M
K
/€€€€€€€@arg0*f32 *
mesh_0"

b
func.return	€€€€€€€@0:

*f32"š™™™™™©?2mesh_import-4abf5b985f9f