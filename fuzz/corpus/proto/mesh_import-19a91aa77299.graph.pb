-
sdy.mesh"
sym_name2mesh"
meshr

a½
	func.func"
sym_visibility2private"
sym_name2dead*s
q
€€À€€€€€@arg0*f32>
	func.call	€€À€€€€€@€€0*f32"
callee:dead_too
func.return€€0:

*f32†
	func.func"
sym_visibility2private"
sym_name2dead_too*8
6
€€€‚€€€€@arg0*f32
func.return	€€€‚€€€€@0:

*f32‚
	func.func"
sym_visibility2private"
sym_name2used*8
6
€€€ƒ€€€€@arg0*f32
func.return	€€€ƒ€€€€@0:

*f32
	func.func"
sym_name2main*o
m
€€€„€€€€@arg0*f32:
	func.call	€€€„€€€€@€À0*f32"
callee:used
func.return€À0:

*f32"š™™™™™©?2mesh_import-19a91aa77299