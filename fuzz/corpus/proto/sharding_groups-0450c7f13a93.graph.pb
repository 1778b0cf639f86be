ÊÇ
	func.func"
sym_name2main*—
”
€€€€€€€€@arg0*f32-
sdy.sharding_group	€€€€€€€€@"
group_id -
sdy.sharding_group	€€€€€€€€@"
group_id 
func.return	€€€€€€€€@0:

*f32"š™™™™™©?2sharding_groups-0450c7f13a93