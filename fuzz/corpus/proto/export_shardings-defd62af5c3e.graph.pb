jh
	func.func"
sym_name2entry*8
6
€€€€€€€€@arg0*f32
func.return	€€€€€€€€@0:

*f32"š™™™™™©?2export_shardings-defd62af5c3e