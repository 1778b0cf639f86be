ü1
sdy.mesh"
sym_name2m"
meshr

a

bÆ
	func.func"
sym_name2main*
‹
9€€À€€€€€@arg0*f32 *

a

b"

a
2€À€€€€€@arg1*f32 *

x"

x
2‚€À€€€€€@arg2*f32 *

x"

xQ
stablehlo.constant€€0*f32"*
valueJ!dense<1.000000e+00> : tensor<f32>
func.return€€0:
*f32"š™™™™™©?2mesh_import-3061930fb29c