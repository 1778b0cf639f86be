æ;
sdy.mesh"
sym_name2mesh"
meshr

a

b

c¦
	func.func"
sym_name2main*ö
ó
€€À€€€€€@arg0*f32¿
sdy.manual_computation	€€À€€€€€@#€€0*f32 *
mesh"

c"!
in_shardingsZ

mesh"

b"
manual_axesb


c

b*7
5
€€€€€€€@arg1*f32

sdy.return	€€€€€€€@
func.return€€0:

*f32"š™™™™™©?2mesh_import-b608373059b7