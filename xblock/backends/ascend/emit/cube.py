"""The AscendC spellings of the Cube unit's ops: a base of `emit.AscendCEmitter`, one method per op."""

from __future__ import annotations


class CubeCalls:
    """Cube and cross-core calls; relies on the emitter's `line`, `expr`, `as_int`, `fresh`, `attr`."""

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

    def op_kernel_type(self, op):
        self.line(f"KERNEL_TASK_TYPE_DEFAULT({self.attr(op, 'type')});")

    def op_data_copy_nd2nz(self, op):
        o = list(op.operands)
        args = ", ".join(self.as_int(v, "uint16_t") for v in o[2:])
        self.line(f"DataCopy({self.expr(o[0])}, {self.expr(o[1])}, Nd2NzParams({args}));")

    def op_load_data(self, op):
        d, s, start, rep, stride = op.operands
        tr = "true" if self.attr(op, "transpose") else "false"
        self.line(f"LoadData({self.expr(d)}, {self.expr(s)}, LoadData2DParams({self.as_int(start, 'uint16_t')}, "
                  f"{self.as_int(rep, 'uint8_t')}, {self.as_int(stride, 'uint16_t')}, 0, 0, {tr}, 0));")

    def op_load_data_with_transpose(self, op):
        d, s, start, rep, stride, gap, frac_gap = op.operands
        self.line(f"LoadDataWithTranspose({self.expr(d)}, {self.expr(s)}, LoadData2dTransposeParams("
                  f"{self.as_int(start, 'uint16_t')}, {self.as_int(rep, 'uint8_t')}, "
                  f"{self.as_int(stride, 'uint16_t')}, "
                  f"{self.as_int(gap, 'uint16_t')}, {self.as_int(frac_gap, 'uint16_t')}));")

    def op_data_copy_bt(self, op):
        d, s, blen = op.operands
        self.line(f"DataCopy({self.expr(d)}, {self.expr(s)}, DataCopyParams(1, {self.as_int(blen, 'uint16_t')}, 0, 0));"
                  "  // L1 -> BiasTable: blockLen in 64 B")

    def op_mmad(self, op):
        c, a, b, m, n, k, init, *bias = op.operands
        tensors = ", ".join(self.expr(v) for v in [c, a, b, *bias])
        self.line(f"Mmad({tensors}, MmadParams({self.as_int(m, 'uint16_t')}, {self.as_int(n, 'uint16_t')}, "
                  f"{self.as_int(k, 'uint16_t')}, 0, false, {self.expr(init)}));")

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
        self.line(f"{p}.nSize = {self.as_int(n, 'uint16_t')};")
        self.line(f"{p}.mSize = {self.as_int(m, 'uint16_t')};")
        self.line(f"{p}.srcStride = {self.as_int(src_stride, 'uint16_t')};")
        self.line(f"{p}.dstStride = {self.as_int(dst_stride, 'uint32_t')};")
        self.line(f"{p}.quantPre = QuantMode_t::{self.attr(op, 'quant')};")
        self.line(f"Fixpipe({self.expr(gm)}, {self.expr(c)}, {p});")

    def op_cross_core_set_flag(self, op):
        self.line(f"CrossCoreSetFlag<{self.attr(op, 'mode')}, {self.attr(op, 'pipe')}>"
                  f"({self.as_int(op.operands[0], 'uint16_t')});")

    def op_cross_core_wait_flag(self, op):
        self.line(f"CrossCoreWaitFlag({self.as_int(op.operands[0], 'uint16_t')});")

    def op_core_is(self, op):  # only ever the condition of an scf.if, printed by emit_if
        pass
