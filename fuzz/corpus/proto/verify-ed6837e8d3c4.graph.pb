¼4
sdy.mesh"
sym_name2mesh"
meshr

a

bƒ
	func.func"
sym_name2f*V
T
8€€À€€€€€@arg0	*f32 *
mesh"	

a" 
func.return	€€À€€€€€@0:
	*f32"š™™™™™©?2verify-ed6837e8d3c4