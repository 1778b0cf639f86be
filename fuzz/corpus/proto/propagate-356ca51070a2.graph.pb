•1
sdy.mesh"
sym_name2m"
meshr

a

bí
	func.func"
sym_visibility2private"
sym_name2callee*Ÿ
œ
€€À€€€€€@arg0	*i329
sdy.func_data_flow_edge	€€À€€€€€@€€0	*i32-
stablehlo.negate€€€À1	*i32
func.return€À0:
	*i32ï
	func.func"
sym_name2main*¾
»
/€€À‚€€€€@arg0	*i32 *
m"

a"=
	func.call	€€À‚€€€€@€€0	*i32"
callee:callee4
sdy.func_data_flow_edge€€€À1	*i32
func.return€À0:
	*i32"š™™™™™©?2propagate-356ca51070a2