í4
sdy.mesh"
sym_name2mesh"
meshr

a

b´
	func.func"
sym_name2main*ø
õ
€€À€€€€€@arg0*f32‹
sdy.named_computation	€€À€€€€€@%€€0*f32 *
mesh"

a"	
name2f"!
in_shardingsZ

mesh"

a*‘

€€€€€€€@arg1*f32Û
sdy.named_computation	€€€€€€€@%€À3*f32 *
mesh"

a"	
name2g"!
in_shardingsZ

mesh"

a*b
`
€€À€€€€@arg2*f32.
stablehlo.abs	€€À€€€€@€€4*f32

sdy.return€€

sdy.return€ÀÖ
sdy.named_computation€€%€À1*f32 *
mesh"

a"	
name2g"!
in_shardingsZ

mesh"

a*b
`
€€Àƒ€€€€@arg1*f32.
stablehlo.abs	€€Àƒ€€€€@€€4*f32

sdy.return€€Ö
sdy.named_computation€€%€€2*f32 *
mesh"

b"	
name2g"!
in_shardingsZ

mesh"

b*b
`
€€€…€€€€@arg1*f32.
stablehlo.abs	€€€…€€€€@€À4*f32

sdy.return€À
func.return€À€€0:

*f32

*f32"š™™™™™©?2func_calls-cbe19d1c854f