ê4
sdy.mesh"
sym_name2mesh"
meshr

a

b±
	func.func"
sym_name2f*ƒ
€
€€À€€€€€@arg0	*f32L
sdy.sharding_constraint	€€À€€€€€@&€€0	*f32 *
mesh"

a
func.return€€0:
	*f32"š™™™™™©?2verify-348ea97bb3f1