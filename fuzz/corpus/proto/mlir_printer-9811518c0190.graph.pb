Ø*
sdy.mesh"
sym_name2m"
meshr

a©
	func.func"
sym_name2f*}
{
€€À€€€€€@arg0*f32H
sdy.sharding_constraint	€€À€€€€€@"€€0*f32 *
m"

a
func.return€€0:

*f32"š™™™™™©?2mlir_printer-9811518c0190