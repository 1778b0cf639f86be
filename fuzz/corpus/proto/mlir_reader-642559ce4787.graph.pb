Ç-
sdy.mesh"
sym_name2mesh"
meshr

a•
	func.func"
sym_name2f*Ü
Ù
€€À€€€€€@p*i32
€À€€€€€@x*f32F
stablehlo.constant€€c*i32"
valueJdense<0> : tensor<i32>÷
stablehlo.while€À€€€€€@€€€Àw*f32‚€Àw*i32*
š
€€À€€€€@it*f32
€À€€€€@n*i32N
stablehlo.compare€À€€€€@€€€€b*i1"
comparison_directionBLT
stablehlo.return€€*
Œ
‚€À€€€€@it*f32
ƒ€À€€€€@n*i327
stablehlo.add‚€À€€€€@‚€À€€€€@€€y*f32!
stablehlo.return€€ƒ€À€€€€@‘
stablehlo.case	€€À€€€€€@€€k*f32‚€€k*f32*%
#!
stablehlo.return€À€À€€€€€@*%
#!
stablehlo.return€À€€€€€@€À¸
sdy.manual_computation‚€€&€Àmc*f32 *
mesh"

a"!
in_shardingsZ

mesh"

a"
manual_axesb

a*7
5
€€À…€€€€@arg1*f32

sdy.return	€€À…€€€€@
func.return€€€À0:

*f32

*f32"š™™™™™©?2mlir_reader-642559ce4787