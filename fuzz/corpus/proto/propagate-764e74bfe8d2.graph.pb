Ú1
sdy.mesh"
sym_name2m"
meshr

a

b¤
	func.func"
sym_name2main*æ
ã
/€€À€€€€€@arg0	*f32 *
m"

a"
/€À€€€€€@arg1	*f32 *
m"

b"-
sdy.sharding_group	€€À€€€€€@"
group_id -
sdy.sharding_group	€À€€€€€@"
group_id !
func.return€€À€€€€€@€À€€€€€@0:
	*f32
	*f32"š™™™™™©?2propagate-764e74bfe8d2