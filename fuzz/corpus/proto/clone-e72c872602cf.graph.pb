¼-
sdy.mesh"
sym_name2mesh"
meshr

aŠ
	func.func"
sym_name2f*K
I
-€€À€€€€€@arg0*f32 *
mesh"

a
func.return	€€À€€€€€@0:
*f32
mesh"

a"š™™™™™©?2clone-e72c872602cf