¨4
sdy.mesh"
sym_name2mesh"
meshr

a

bÒ
	func.func"
sym_name2main*–
“
€€À€€€€€@arg0*f32J
	func.call	€€À€€€€€@%€€0*f32 *
mesh"

a"
callee:fG
	func.call€€%€À1*f32 *
mesh"

a"
callee:g_0G
	func.call€€%€€2*f32 *
mesh"

b"
callee:g_1
func.return€À€€0:

*f32

*f32ğ
	func.func"
sym_visibility2private"
sym_name2f*•
’
-€€€ƒ€€€€@arg0*f32 *
mesh"

aL
	func.call	€€€ƒ€€€€@%€À0*f32 *
mesh"

a"
callee:g_0
func.return€À0:
*f32
mesh"

aÒ
	func.func"
sym_visibility2private"
sym_name2g_0*v
t
-€€À„€€€€@arg0*f32 *
mesh"

a.
stablehlo.abs	€€À„€€€€@€€0*f32
func.return€€0:
*f32
mesh"

aÒ
	func.func"
sym_visibility2private"
sym_name2g_1*v
t
-€€€†€€€€@arg0*f32 *
mesh"

b.
stablehlo.abs	€€€†€€€€@€À0*f32
func.return€À0:
*f32
mesh"

b"š™™™™™©?2func_calls-6e6f1bc3fa0d