°4
sdy.mesh"
sym_name2mesh"
meshr

a

ax
	func.func"
sym_name2f*K
I
-€€À€€€€€@arg0	*f32 *
mesh""
func.return	€€À€€€€€@0:
	*f32"š™™™™™©?2verify-85e493286bf7