Ò1
sdy.mesh"
sym_name2m"
meshr

a

b-
sdy.mesh"
sym_name2mesh"
meshr

x3
sdy.mesh"
sym_name2maximal_mesh_3"
meshr¸
	func.func"
sym_name2main*÷
ô
*€€À€€€€@arg0*f32 *
m"

a
-€À€€€€@arg1*f32 *
mesh"

x
-‚€À€€€€@arg2*f32 *
mesh"

xS
stablehlo.constant€€cst*f32"*
valueJ!dense<1.000000e+00> : tensor<f32>
func.return€€0:
*f32
maximal_mesh_3"š™™™™™©?2mesh_import-3f5a68306012