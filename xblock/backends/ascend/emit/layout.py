"""The AscendC spellings of the vector layout ops (TransDataTo5HD): a base of `emit.AscendCEmitter`."""

from __future__ import annotations

from ....dialects import ascendc as A


class LayoutCalls:
    """Layout calls; relies on the emitter's `line`, `expr`, `fresh`, `attr`, `ctype`, `depth`."""

    def op_trans_data_5hd(self, op):
        """`TransDataTo5HD(dstList, srcList, params)` with the two address lists built from a base
        tensor and a row stride (LocalTensor copies: no UB access), in a scope of their own; 8-bit
        calls name the DataBlock halves they write and read (`dst_high`, `src_high`)."""
        d, s = op.operands
        elem = A.elem_of(d.type)
        t = self.ctype(elem)
        b32 = elem in ("f32", "i32", "ui32")
        ss, ds = self.attr(op, "src_stride"), self.attr(op, "dst_stride")
        dl, sl, i = self.fresh("dstList"), self.fresh("srcList"), self.fresh("i")
        self.line("{")
        self.depth += 1
        self.line(f"LocalTensor<{t}> {dl}[16];")
        self.line(f"LocalTensor<{t}> {sl}[16];")
        self.line(f"for (int32_t {i} = 0; {i} < 16; {i}++) {{")
        self.depth += 1
        self.line(f"{sl}[{i}] = {self.expr(s)}[{i} * {ss}];")
        if b32:  # 16 rows of 8 -> 8 rows of 16: two DataBlocks per output row
            self.line(f"{dl}[{i}] = {self.expr(d)}[({i} / 2) * {ds} + ({i} % 2) * 8];")
        else:
            self.line(f"{dl}[{i}] = {self.expr(d)}[{i} * {ds}];")
        self.depth -= 1
        self.line("}")
        # the halves of the DataBlocks an 8-bit call writes and reads (vector/transpose.py `_transpose_b8`)
        dh, sh = (str(bool(self.attr(op, k))).lower() if k in op.attributes else "false"
                  for k in ("dst_high", "src_high"))
        self.line(f"TransDataTo5HD<{t}>({dl}, {sl}, TransDataTo5HDParams({dh}, {sh}, {self.attr(op, 'repeat')}, "
                  f"{self.attr(op, 'dst_rep')}, {self.attr(op, 'src_rep')}));")
        self.depth -= 1
        self.line("}")
