±4
sdy.mesh"
sym_name2mesh"
meshr

a

bÛ
	func.func"
sym_visibility2private"
sym_name2f*€
~
€€À€€€€€@arg0*f32K
sdy.sharding_constraint	€€À€€€€€@%€€0*f32 *
mesh"

a
func.return€€0:
*f32
mesh"

aš
	func.func"
sym_name2main*ê
ç
€€€‚€€€€@arg0*f32J
	func.call	€€€‚€€€€@%€À0*f32 *
mesh"

a"
callee:f:
sdy.reshard€À%€€1*f32 *
mesh"

b,
stablehlo.negate€€€À2*f32
func.return€À0:

*f32"š™™™™™©?2func_calls-63046c06efc6