ó4
sdy.mesh"
sym_name2mesh"
meshr

a

bÙ
	func.func"
sym_visibility2private"
sym_name2f*€
~
€€À€€€€€@arg0*f32K
sdy.sharding_constraint	€€À€€€€€@%€€0*f32 *
mesh"

a
func.return€€0:
*f32
mesh"

aŞ
	func.func"
sym_name2main*®
«
€€€‚€€€€@arg0*f32J
	func.call	€€€‚€€€€@%€À0*f32 *
mesh"

b"
callee:f,
stablehlo.negate€À€€1*f32
func.return€€0:

*f32"š™™™™™©?2func_calls-bea19fbe742f