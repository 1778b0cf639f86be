´4
sdy.mesh"
sym_name2mesh"
meshr

a

bû
	func.func"
sym_name2f*Í
Ê
€€À€€€€€@arg0	*f32•
sdy.manual_computation	€€À€€€€€@*€€0	*f32 *
mesh"

a""%
in_shardingsZ

mesh"

a""
manual_axesb

a*†
ƒ
€€€€€€€@arg1	*f32P
sdy.sharding_constraint	€€€€€€€@*€À1	*f32 *
mesh""

a

sdy.return€À
func.return€€0:
	*f32"š™™™™™©?2verify-bee320fc323d