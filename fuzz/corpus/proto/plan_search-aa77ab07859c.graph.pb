ig
	func.func"
sym_name2main*8
6
€€€€€€€€@arg0*f32
func.return	€€€€€€€€@0:

*f32"š™™™™™©?2plan_search-aa77ab07859c