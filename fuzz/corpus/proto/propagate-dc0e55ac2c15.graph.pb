§8
sdy.mesh"
sym_name2m"
meshr

a

b

cê
	func.func"
sym_name2main*º
·
€€À€€€€€@arg0*i32
/€À€€€€€@arg1*i64 *
m"

a

b
/‚€À€€€€€@arg2*i64 *
m"

a

cu
stablehlo.case	€€À€€€€€@€€0*i64*!

stablehlo.return	€À€€€€€@*!

stablehlo.return	‚€À€€€€€@.
sdy.data_flow_edge€€€À1*i64
func.return€À0:

*i64"š™™™™™©?2propagate-dc0e55ac2c15