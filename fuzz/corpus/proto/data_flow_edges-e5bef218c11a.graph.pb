ÔÑ
	func.func"
sym_name2main*¡

€€€€€€€€@arg0*f32>
stablehlo.optimization_barrier	€€€€€€€€@€@0*f32+
stablehlo.negate€@€€1*f32
func.return€€0:

*f32"š™™™™™©?2data_flow_edges-e5bef218c11a