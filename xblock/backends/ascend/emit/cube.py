"""The AscendC spellings of the Cube unit's ops: a base of `emit.AscendCEmitter`, one method per op."""

from __future__ import annotations


class CubeCalls:
    """Cube and cross-core calls; relies on the emitter's `line`, `expr`, `fresh`, `attr`."""

    def cube_header(self) -> None:
        """The tile plan of each dot on the Cube (L1/L0 use against capacity) and the mixed kernel's GM
        workspace, under the unified-buffer line of the file header."""
        dots = self.meta.get("cube") or []
        for k, c in enumerate(dots):
            tiles, _, use = c["plan"].partition("; L1 ")
            m, n, kk = c["block"]
            what = {"fixpipe": "through Fixpipe to GM", "vector": "to the vector core",
                    "handoff": "handed to the vector core"}
            self.line(f"// Cube dot {k + 1} of {len(dots)}: {m} x {n} x {kk} {c['dtype']}, result "
                      f"{what.get(c['epilogue'], c['epilogue'])}"
                      f"{', the accumulator starting at the bias row in the BiasTable' if c.get('bias') else ''}:")
            self.line(f"//   {tiles};")
            self.line(f"//   L1 {use}.")
        if dots and self.meta.get("workspace_bytes"):
            self.line(f"// GM workspace: {self.meta['workspace_bytes']} B per block (AIC <-> AIV hand-offs).")
        joined = max((c.get("join", 1) for c in dots), default=1)
        if joined > 1:
            self.line(f"// Programs joined: each core takes a contiguous range of the programs, {joined} at a time "
                      "(the loop")
            self.line(f"// over pid below runs programs pid .. pid + {joined - 1} of its range together in one "
                      "iteration).")

    def op_kernel_type(self, op):
        self.line(f"KERNEL_TASK_TYPE_DEFAULT({self.attr(op, 'type')});")

    # The fields of the parameter structs are printed uncast: a narrowing static_cast would hide an out-of-range
    # value from the CPU model, which refuses it (the generator keeps inside the ranges: cube/ops.py nd2nz).
    def field(self, v) -> str:
        return self.expr(v)

    def op_data_copy_nd2nz(self, op):
        o = list(op.operands)
        args = ", ".join(self.field(v) for v in o[2:])
        self.line(f"DataCopy({self.expr(o[0])}, {self.expr(o[1])}, Nd2NzParams({args}));")

    def op_load_data(self, op):
        d, s, start, rep, stride, *gap = op.operands
        tr = "true" if self.attr(op, "transpose") else "false"
        gap = self.field(gap[0]) if gap else "0"
        self.line(f"LoadData({self.expr(d)}, {self.expr(s)}, LoadData2DParams({self.field(start)}, "
                  f"{self.field(rep)}, {self.field(stride)}, 0, {gap}, {tr}, 0));")

    def op_load_data_with_transpose(self, op):
        d, s, start, rep, stride, gap, frac_gap = op.operands
        self.line(f"LoadDataWithTranspose({self.expr(d)}, {self.expr(s)}, LoadData2dTransposeParams("
                  f"{self.field(start)}, {self.field(rep)}, "
                  f"{self.field(stride)}, "
                  f"{self.field(gap)}, {self.field(frac_gap)}));")

    def op_data_copy_bt(self, op):
        d, s, blen = op.operands
        self.line(f"DataCopy({self.expr(d)}, {self.expr(s)}, DataCopyParams(1, {self.field(blen)}, 0, 0));"
                  "  // L1 -> BiasTable: blockLen in 64 B")

    def op_mmad(self, op):
        c, a, b, m, n, k, init, *bias = op.operands
        tensors = ", ".join(self.expr(v) for v in [c, a, b, *bias])
        self.line(f"Mmad({tensors}, MmadParams({self.field(m)}, {self.field(n)}, "
                  f"{self.field(k)}, 0, false, {self.expr(init)}));")

    def op_fixpipe(self, op):
        gm, c, n, m, src_stride, dst_stride = op.operands
        p = self.fresh("fixParams")
        self.line(f"FixpipeParamsV220 {p};  // every field set below: the default leaves deqScalar uninitialised")
        self.line(f"{p}.deqScalar = 0;")
        self.line(f"{p}.ndNum = 1;")
        self.line(f"{p}.srcNdStride = 0;")
        self.line(f"{p}.dstNdStride = 0;")
        self.line(f"{p}.reluEn = {'true' if self.attr(op, 'relu') else 'false'};")
        self.line(f"{p}.unitFlag = 0;")
        self.line(f"{p}.nSize = {self.field(n)};")
        self.line(f"{p}.mSize = {self.field(m)};")
        self.line(f"{p}.srcStride = {self.field(src_stride)};")
        self.line(f"{p}.dstStride = {self.field(dst_stride)};")
        self.line(f"{p}.quantPre = QuantMode_t::{self.attr(op, 'quant')};")
        self.line(f"Fixpipe({self.expr(gm)}, {self.expr(c)}, {p});")

    def op_cross_core_set_flag(self, op):
        self.line(f"CrossCoreSetFlag<{self.attr(op, 'mode')}, {self.attr(op, 'pipe')}>"
                  f"({self.field(op.operands[0])});")

    def op_cross_core_wait_flag(self, op):
        self.line(f"CrossCoreWaitFlag({self.field(op.operands[0])});")

    def op_core_is(self, op):  # only ever the condition of an scf.if, printed by emit_if
        pass
