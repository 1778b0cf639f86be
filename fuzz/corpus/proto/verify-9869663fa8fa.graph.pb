å4
sdy.mesh"
sym_name2mesh"
meshr

a

b¬
	func.func"
sym_name2f*ş
û
€€À€€€€€@arg0	*f32Æ
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
c*8
6
€€€€€€€@arg1	*f32

sdy.return	€€€€€€€@
func.return€€0:
	*f32"š™™™™™©?2verify-9869663fa8fa