›
jit_f
mhlo.num_partitionsJ8 : i32-
sdy.mesh"
sym_name2mesh"
meshr

aÂ
	func.func"
sym_visibility2public"
sym_name2main*y
w
-€€À€€€€€@arg0*f32 *
mesh"

a1
stablehlo.negate	€€À€€€€€@€€0*f32
func.return€€0:

*f32"š™™™™™©?2mlir_reader-ddbc0e45bf11