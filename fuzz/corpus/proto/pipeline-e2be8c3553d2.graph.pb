Ò±
	func.func"
sym_visibility2private"
sym_name2f*j
h
€€€€€€€€@arg0*f326
	func.call	€€€€€€€€@€@0*f32"
callee:f
func.return€@0:

*f32›
	func.func"
sym_name2main*l
j
€€À€€€€@arg0*f327
	func.call	€€À€€€€@€€0*f32"
callee:f
func.return€€0:

*f32"š™™™™™©?2pipeline-e2be8c3553d2