Õ-
sdy.mesh"
sym_name2mesh"
meshr

a‚
	func.func"
sym_visibility2private"
sym_name2used*8
6
€€À€€€€€@arg0*f32
func.return	€€À€€€€€@0:

*f32
	func.func"
sym_name2main*o
m
€€À€€€€@arg0*f32:
	func.call	€€À€€€€@€€0*f32"
callee:used
func.return€€0:

*f32"š™™™™™©?2mesh_import-422c7eba69af