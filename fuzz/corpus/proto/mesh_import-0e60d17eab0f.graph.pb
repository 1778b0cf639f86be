Ô=
sdy.mesh"
sym_name2mesh"
meshr

a

one

b’
	func.func"
sym_name2main*Ã
À
N€€À€€€€€@arg0	*f32 */
mesh"

one "

a

one*
one*
bY
sdy.sharding_constraint	€€À€€€€€@3€€0	*f32 *
mesh""	

one2
one
func.return€€0:+)
	*f32
mesh"

one

b""š™™™™™©?2mesh_import-0e60d17eab0f