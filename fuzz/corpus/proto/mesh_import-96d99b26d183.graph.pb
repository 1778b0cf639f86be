¦=
sdy.mesh"
sym_name2mesh"
meshr

a

one

bä
	func.func"
sym_name2main*œ
™
5€€À€€€€€@arg0	*f32 *
mesh""

a*
bK
sdy.sharding_constraint	€€À€€€€€@%€€0	*f32 *
mesh""
func.return€€0:$"
	*f32
mesh"

b""š™™™™™©?2mesh_import-96d99b26d183