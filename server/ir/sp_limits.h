/*
 * sp_limits.h - every bound on external input, with its unit, in one place.
 *
 * Input that exceeds one of these is rejected with SP_ELIMIT and a message naming the limit;
 * nothing here is a tuning knob for correct input.
 */
#ifndef SP_LIMITS_H
#define SP_LIMITS_H

#define SP_MAX_INPUT_BYTES      (256L * 1024 * 1024) /* bytes of one MLIR text or request */
#define SP_MAX_NESTING          256        /* region / bracket nesting depth */
#define SP_MAX_RANK             64         /* dimensions of one tensor */
#define SP_MAX_MESH_AXES        32         /* axes of one mesh */
#define SP_MAX_DEVICES          (1 << 20)  /* devices of one mesh */
#define SP_MAX_OPS              (16 * 1024 * 1024) /* ops in one module */
#define SP_MAX_OPERANDS         (1 << 20)  /* operands or results of one op */
#define SP_MAX_FACTORS          1024       /* factors of one sharding rule */
#define SP_MAX_IDENT            4096       /* bytes of one identifier or symbol name */
#define SP_SG_MAX_NODES         (1 << 24)  /* nodes of one strategy graph */
#define SP_SG_MAX_EDGES         (1 << 26)  /* edges of one strategy graph */
#define SP_SG_MAX_STRATEGIES    (1 << 16)  /* strategies of one strategy-graph node */
#define SP_SG_MAX_PAIRS         (1 << 24)  /* cost entries of one strategy-graph edge */

#endif /* SP_LIMITS_H */
