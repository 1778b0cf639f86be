æã
	func.func"
sym_name2main*³
°
€€€€€€€€@arg0*f32
€€€€€€€@arg1*f32-
sdy.sharding_group	€€€€€€€€@"
group_id -
sdy.sharding_group	€€€€€€€@"
group_id 
func.return	€€€€€€€€@0:

*f32"š™™™™™©?2sharding_groups-f1ee366b2c3c