â-
sdy.mesh"
sym_name2mesh"
meshr

a°
	func.func"
sym_name2main*€
~
€€À€€€€€@arg0*f32K
sdy.sharding_constraint	€€À€€€€€@%€€0*f32 *
mesh"

a
func.return€€0:

*f32"š™™™™™©?2pipeline-6de880e5c303