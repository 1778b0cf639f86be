…4
sdy.mesh"
sym_name2mesh"
meshr

a

bÌ
	func.func"
sym_name2main*

-€€À€€€€€@arg0*f32 *
mesh"

a
-€À€€€€€@arg1*f32 *
mesh"

b1
stablehlo.negate	€€À€€€€€@€€0*f32-
sdy.sharding_group	€€À€€€€€@"
group_id -
sdy.sharding_group	€À€€€€€@"
group_id 
func.return€€€À€€€€€@0:

*f32

*f32"š™™™™™©?2sharding_groups-4d075e743e55