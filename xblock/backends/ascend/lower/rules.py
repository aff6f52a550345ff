"""The ascend lowering's rule table (a `common.rules.RuleTable`), filled by `@rule(...)` in the rule modules.

A rule is `fn(ctx, op)`, `ctx` the `driver.Lowering` of the kernel. A rule may be guarded
(`@rule("scf.for", when=pred)`): it then takes the ops `pred(ctx, op)` accepts, ahead of the
plain rule for that name (the `scf.for` around a Cube `dot` versus any other loop). A module can
also register a hook that runs once before the walk (`@before_walk`), e.g. to claim the ops that
another op's rule will lower itself (`ctx.absorb`), or once after it (`@after_walk`). `rule_for`
is None for an op without a rule (the driver then clones scalar arith, or raises). `UNSUPPORTED`
names the xb ops ascend refuses, with the reason users see. The table is full once `pipeline` has
imported the rule modules.
"""

from __future__ import annotations

from ...common.rules import RuleTable

TARGET = "ascend"
TABLE = RuleTable(TARGET)  # a rule is fn(ctx: driver.Lowering, op) -> None
RULES, GUARDED, UNSUPPORTED = TABLE.rules, TABLE.guarded, TABLE.unsupported
BEFORE_WALK, AFTER_WALK = TABLE.before_walk_hooks, TABLE.after_walk_hooks
rule, before_walk, after_walk = TABLE.rule, TABLE.before_walk, TABLE.after_walk
rule_for = TABLE.rule_for  # (ctx, op) -> the first guarded rule accepting op, else the plain one, else None
coverage = TABLE.coverage  # (the op names with a rule, UNSUPPORTED); complete once `pipeline` imported the rules

# xb op -> why ascend refuses it: the error users get at the op's line
UNSUPPORTED.update({
    "xb.atomic_cas": "atomic_cas (xb.atomic_cas) is not supported on ascend: it needs AscendC's scalar AtomicCas "
                     "(basic_api/kernel_operator_atomic_intf.h), which asc-devkit documents for Ascend 950PR/950DT "
                     "only, not for Atlas A2 (910B) (asc-devkit docs/zh/api/SIMD-API/基础API/原子操作/AtomicCas.md); "
                     "Atlas A2 has only the data-copy atomics SetAtomicAdd/SetAtomicMax/SetAtomicMin, which return "
                     "nothing, so a lock (`while atomic_cas(lock, 0, 1) == 1`) cannot be built; run the kernel with "
                     "target=\"sim\" or \"cpu\"",
    "xb.print": "device_print is not supported on ascend (the AscendC reference xblock follows documents no "
                "printf/DumpTensor); run the kernel with target=\"sim\" to print",
    "xb.ptr_to_int": "a pointer cast to an integer is not supported on ascend: GM addresses are not values the "
                     "generated AscendC code computes with",
    "xb.fp_to_fp": "this float conversion is not supported on ascend: the 910B vector unit has no float8 type, "
                   "and its Cast from float to half/bfloat16 rounding toward zero (fp_downcast_rounding='rtz') "
                   "is not modelled",
})
# float8 element types: 910B has none, whatever the op (xb's names, longest first -> Triton's)
FP8_NAMES = {"f8E4M3B11FNUZ": "fp8e4b15", "f8E4M3FNUZ": "fp8e4b8", "f8E5M2FNUZ": "fp8e5b16", "f8E4M3FN": "fp8e4nv",
             "f8E5M2": "fp8e5"}
FP8_REASON = ("float8 types ({}) are not supported on ascend: the 910B vector unit has no 8-bit float type "
              "(keep float16 or float32 data where the kernel runs on ascend)")

