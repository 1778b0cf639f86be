Ìd
	func.func"
sym_name2a*8
6
€€€€€€€€@arg0*f32
func.return	€€€€€€€€@0:

*f32d
	func.func"
sym_name2b*8
6
€€€€€€€@arg0*f32
func.return	€€€€€€€@0:

*f32"š™™™™™©?2export_shardings-526dead322e9