¦4
sdy.mesh"
sym_name2mesh"
meshr

a

bí
	func.func"
sym_name2main*½
º
-€€À€€€€€@arg0*f32 *
mesh"

a
€À€€€€€@arg1*f32
‚€À€€€€€@arg2*f32
ƒ€À€€€€€@arg3*f32.
sdy.sharding_group	€À€€€€€@"
group_id ·-
sdy.sharding_group	€À€€€€€@"
group_id -
sdy.sharding_group	‚€À€€€€€@"
group_id -
sdy.sharding_group	€€À€€€€€@"
group_id /
sdy.sharding_group	ƒ€À€€€€€@"
group_id ÀÄ-
sdy.sharding_group	‚€À€€€€€@"
group_id 
func.return	€€À€€€€€@0:

*f32"š™™™™™©?2sharding_groups-ad2c3faee8bd