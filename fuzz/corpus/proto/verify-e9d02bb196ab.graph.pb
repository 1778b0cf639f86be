Ã4
sdy.mesh"
sym_name2mesh"
meshr

a

bŠ
	func.func"
sym_name2f*]
[
?€€À€€€€€@arg0	*f32 * 
mesh"

a"

a
func.return	€€À€€€€€@0:
	*f32"š™™™™™©?2verify-e9d02bb196ab