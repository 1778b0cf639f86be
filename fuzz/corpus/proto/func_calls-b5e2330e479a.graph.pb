”4
sdy.mesh"
sym_name2mesh"
meshr

a

b
	func.func"
sym_name2main*n
l
€€À€€€€€@arg0*f329
	func.call	€€À€€€€€@€€0*f32"
callee:foo
func.return€€0:

*f32·
	func.func"
sym_visibility2private"
sym_name2foo*n
l
€€€‚€€€€@arg0*f329
	func.call	€€€‚€€€€@€À0*f32"
callee:bar
func.return€À0:

*f32
	func.func"
sym_visibility2private"
sym_name2bar*8
6
€€Àƒ€€€€@arg0*f32
func.return	€€Àƒ€€€€@0:

*f32"š™™™™™©?2func_calls-b5e2330e479a