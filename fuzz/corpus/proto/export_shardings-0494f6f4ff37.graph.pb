ê4
sdy.mesh"
sym_name2mesh"
meshr

a

b±
	func.func"
sym_name2main*ä
á
2€€À€€€€€@arg0	*f32 *
mesh"

a"I
stablehlo.negate	€€À€€€€€@*€€0	*f32 *
mesh"

a"K
sdy.sharding_constraint€€*€À1	*f32 *
mesh"

a"
func.return€À0:)'
	*f32
mesh""

b2
a"š™™™™™©?2export_shardings-0494f6f4ff37