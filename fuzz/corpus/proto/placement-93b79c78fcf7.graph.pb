ä;
sdy.mesh"
sym_name2mesh"
meshr

data
	
model¤
	func.func"
sym_name2main*r
p
€€À€€€€€@arg0€€*f32:
stablehlo.add€€À€€€€€@€€À€€€€€@€€0€€*f32
func.return€€0:
€€*f32"š™™™™™©?2placement-93b79c78fcf7