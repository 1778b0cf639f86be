ğ;
sdy.mesh"
sym_name2mesh"
meshr

a

b

c°
	func.func"
sym_name2main*€
ı
€€À€€€€€@arg0*f32É
sdy.manual_computation	€€À€€€€€@(€€0*f32 *
mesh"

c*
b"&
in_shardingsZ

mesh"

b*
c"
manual_axesb


b

c*7
5
€€€€€€€@arg1*f32

sdy.return	€€€€€€€@
func.return€€0:

*f32"š™™™™™©?2mesh_import-2569660f6ea3