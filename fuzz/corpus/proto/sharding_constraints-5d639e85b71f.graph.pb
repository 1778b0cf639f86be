ì4
sdy.mesh"
sym_name2mesh"
meshr

a

b³
	func.func"
sym_name2main*÷
ô
€€À€€€€€@arg0*f32
€À€€€€€@arg1*f32 
sdy.manual_computation€€À€€€€€@€À€€€€€@%€€0*f32 *
mesh"

a%‚€€0*f32 *
mesh"

a"0
in_shardingsZ 

mesh"

a

mesh"

a"
manual_axesb

a*\
Z
€€€€€€€@arg2*f32
€€€€€€@arg3*f32 

sdy.return€€€€€€€@€€€€€€@
func.return€€‚€€0:

*f32

*f32"š™™™™™©?2!sharding_constraints-5d639e85b71f