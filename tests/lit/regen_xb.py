"""Regenerate tests/lit/xb/*.mlir from the current compiler (review the diff before committing)."""

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.lit.test_xb_golden import GOLDEN, emitted_xb  # noqa: E402

HEADER = ("// Protects the xb emitted for examples/{name}.py ({size}, {dtype}): the ops, their order and "
          "types after the passes.\n")


def checks(text: str) -> str:
    out = []
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("func.func"):
            out.append("// CHECK-LABEL: " + re.sub(r"\(%arg.*", "", s))
        elif re.search(r'"xb\.|scf\.(for|if|while|yield)|math\.|^\}\) \{', s):
            s = re.sub(r"%[\w#]+", "{{.*}}", s)
            s = re.sub(r"^\{\{\.\*\}\}(:\d+)?(, \{\{\.\*\}\})* = ", "", s)
            out.append("// CHECK: " + s)
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    for name, (size, dtype) in GOLDEN.items():
        path = Path(__file__).parent / "xb" / f"{name}.mlir"
        path.write_text(HEADER.format(name=name, size=size, dtype=dtype) + checks(emitted_xb(name)))
        print("wrote", path)
