"""A test-only target for the fuzzer: the simulator running kernels coarsened by xb-coarsen-programs.

Each kernel the pass takes runs with R = 4 rows per instance tile, of which Q (1 to 4, by the
kernel's name) are the instance's (so the masking of rows past Q and past the grid is exercised
too); a kernel the pass refuses runs as written. Compared with the plain sim by the fuzzer, this
checks the pass on every generated kernel at the sim's speed, without a backend in between:

    python tools/fuzz.py --seed S --count N --targets sim,sim-coarsened \\
        --extra-target sim-coarsened=tests.fuzz.coarsened_target
"""

import dataclasses
import pickle

import numpy as np

from xblock.errors import LaunchArgumentError, LaunchError
from xblock.sim import backend as sb

ROWS = 4


def _make_program(module, metadata) -> bytes:
    from mlir import ir

    from xblock.passes import coarsen_programs, verify
    from xblock.sim.convert import convert

    metadata["coarsen"] = None
    with module.context:
        copy = ir.Module.parse(module.operation.get_asm(enable_debug_info=True))
        try:
            coarsen_programs.run(copy, ROWS)
        except coarsen_programs.Refused:
            return pickle.dumps(convert(module), protocol=pickle.HIGHEST_PROTOCOL)
        verify(copy, coarsen_programs.NAME)
    metadata["coarsen"] = {"rows": ROWS}
    return pickle.dumps(convert(copy), protocol=pickle.HIGHEST_PROTOCOL)


def _load(asm, metadata):
    from xblock.sim.program import bind_rules
    from xblock.sim.rules import LAZY_RULES, SIM_RULES

    program = pickle.loads(asm["simprog"])
    bind_rules(program.body, SIM_RULES, LAZY_RULES)
    sigs, names = metadata["arg_types"], metadata["arg_names"]
    coarse = metadata.get("coarsen")
    per = 1 + sum(map(ord, metadata["name"])) % ROWS

    def launch(grid, args):
        if len(args) != len(sigs):
            raise LaunchError(metadata["file"], metadata["line"], metadata["name"],
                              f"expected {len(sigs)} runtime arguments, got {len(args)}")
        arrays, arr_names, vals = [], [], []
        for name, sig, v in zip(names, sigs, args):
            if sig.startswith("*"):
                vals.append(None)
                try:
                    arrays.append(sb._as_numpy(v))
                except Exception as e:  # noqa: BLE001
                    raise LaunchArgumentError(metadata["file"], metadata["line"], metadata["name"], str(e)) from None
                arr_names.append(name)
            else:
                vals.append(np.array([v], dtype=sb._SCALAR[sig]))
        grid = tuple(grid)
        if coarse:
            vals += [np.array([grid[0]], np.int32), np.array([per], np.int32)]
            grid = (-(-grid[0] // per), grid[1], grid[2])
        memory = sb._run(program, grid, arrays, arr_names, vals, serial=False)
        for i in sorted(memory.written):
            np.copyto(arrays[i], memory.arrays[i])

    return launch


BACKEND = dataclasses.replace(sb.BACKEND, name="sim-coarsened", stages=lambda options: {"simprog": _make_program},
                              load=_load)
