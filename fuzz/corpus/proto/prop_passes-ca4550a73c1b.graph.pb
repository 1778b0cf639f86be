×*
sdy.mesh"
sym_name2m"
meshr

a¨
	func.func"
sym_name2main*x
v
*€€À€€€€€@arg0*f32 *
m"

a3
stablehlo.reshape	€€À€€€€€@€€0	*f32
func.return€€0:
	*f32"š™™™™™©?2prop_passes-ca4550a73c1b