~|
	func.func"
sym_name2main*M
K
/€€€€€€€€@arg0*f32 *
nomesh"

a
func.return	€€€€€€€€@0:

*f32"š™™™™™©?2diag-b4856368d17f