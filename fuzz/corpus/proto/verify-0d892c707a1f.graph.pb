¾4
sdy.mesh"
sym_name2mesh"
meshr

a

b…
	func.func"
sym_name2f*×
Ô
€€À€€€€€@arg0	*f32Ÿ
sdy.manual_computation	€€À€€€€€@/€€0	*f32 *
mesh"

a"

b"*
in_shardingsZ

mesh"

a

b""
manual_axesb

a*†
ƒ
€€€€€€€@arg1	*f32P
sdy.sharding_constraint	€€€€€€€@*€À1	*f32 *
mesh""

b

sdy.return€À
func.return€€0:
	*f32"š™™™™™©?2verify-0d892c707a1f