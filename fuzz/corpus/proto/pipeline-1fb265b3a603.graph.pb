‘-
sdy.mesh"
sym_name2mesh"
meshr

aß
	func.func"
sym_name2main*¯
¬
€€À€€€€€@arg0*f321
stablehlo.negate	€€À€€€€€@€€0*f32F
sdy.sharding_constraint€€%€À1*f32 *
mesh"

a
func.return€À0:

*f32"š™™™™™©?2pipeline-1fb265b3a603