ú;
sdy.mesh"
sym_name2mesh"
meshr

data
	
modelº
	func.func"
sym_name2main*‡
„
7€€À€€€€€@arg0€€*f32 *
mesh"


data"4
stablehlo.negate	€€À€€€€€@€€0€€*f32
func.return€€0:
€€*f32"š™™™™™©?2placement-73c8cb58a42f