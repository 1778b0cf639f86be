“
	func.func"
sym_name2main*a
_
€€€€€€€€@a*f320
stablehlo.negate	€€€€€€€€@€@0*f32
func.return€@0:

*f32"š™™™™™©?2report-1c7e72b40f8c