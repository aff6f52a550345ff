"""The cuda stages after xb: ttir (our TTIR, parsed and optimized by Triton), ttgir, llir, ptx, cubin.

Each stage wraps the stage of the same name of Triton's NVIDIA backend (`CUDABackend.add_stages`),
run on TTIR that `lowering.emit_ttir` printed. Triton's own cache is not used: xblock caches every
stage. No GPU is needed; `arch` picks the target (sm_80, sm_90a, ...). Triton is imported when the
first stage runs (it is optional: a machine without it can still run the sim, cpu and ascend).

Layout of the backend (each module imports only those below it):
- `__init__`: the `Backend`; imports this module (MLIR, Triton) only when something compiles, and
  `launch` (torch, Triton) at the first launch.
- `pipeline` (here): the stages `make_<ext>` of `TritonPipeline`, and the TTIR spellings of the
  installed Triton (`ttir_dialect`). Importing `lowering` here fills the rule table.
- `lowering`: the rules, one per op, and `emit_ttir`, which applies them; `descriptors`: the rules of
  tensor descriptors (TMA); `tma`: which host descriptor arguments become Triton's `!tt.tensordesc`.
- `reductions`: `tt.reduce`/`tt.scan` and their combine regions (a helper of the reduce/scan rules).
- `diagnostics`: a failed Triton stage, as an error at the kernel line its diagnostic names.
- `rules`: the rule table, `UNSUPPORTED`, the context, and the walk that applies the rules.
- `emit`: the TTIR printer and Triton's enums.
- `launch`: Triton's launcher on torch tensors; `options`: Triton's options, Triton's version;
  `precompile`: compile a launch without a GPU.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import tempfile

from ...errors import CompilationError
from . import descriptors  # noqa: F401  (the rules of tensor descriptors)
from .diagnostics import stage_error
from .emit import TTIRDialect
from .lowering import emit_ttir
from .options import CudaOptions, triton_version
from .tma import launch_descriptors


def stages(options: CudaOptions) -> dict:
    """The ordered stages ext -> fn(previous output, metadata) of one compile (Triton's `add_stages`)."""
    p = TritonPipeline(options)
    return {"ttir": p.make_ttir, "ttgir": p.make_ttgir, "llir": p.make_llir, "ptx": p.make_ptx,
            "cubin": p.make_cubin}


@contextlib.contextmanager
def _quiet_stderr():
    """Silence C++ diagnostics printed on fd 2 (a failed probe parse is expected)."""
    fd = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(fd, 2)
        os.close(fd)


def _parse(text: str, context, name: str = "kernel"):
    from triton._C.libtriton import ir

    d = tempfile.mkdtemp(prefix="xblock-ttir-")
    path = os.path.join(d, f"{name}.ttir")
    try:
        with open(path, "w") as f:
            f.write(text)
        module = ir.parse_mlir_module(path, context)
        module.context = context  # Triton's stages read it (as IRSource.make_ir sets it)
        return module
    finally:
        with contextlib.suppress(OSError):
            os.remove(path)
            os.rmdir(d)


_PROBE = ('"builtin.module"() ({\n  "tt.func"() ({\n  ^bb0(%arg0: !tt.ptr<f32>):\n'
          '    %0 = "tt.load"(%arg0) {cachePolicy = #tt.cache_policy<cache_modifier = cg, eviction_policy = '
          'evict_last>, operandSegmentSizes = array<i32: 1, 0, 0>} : (!tt.ptr<f32>) -> f32\n'
          '    "tt.return"() : () -> ()\n  }) {function_type = (!tt.ptr<f32>) -> (), sym_name = "probe"} '
          ': () -> ()\n}) : () -> ()\n')


@functools.lru_cache(maxsize=None)
def ttir_dialect() -> TTIRDialect:
    """The TTIR spellings of the installed Triton, found by letting its parser try the newer one."""
    ctx = _context()
    try:
        with _quiet_stderr():
            _parse(_PROBE, ctx, "probe")
        return TTIRDialect(cache_policy=True)
    except Exception:
        return TTIRDialect(cache_policy=False)


def _context():
    from triton._C.libtriton import ir
    from triton.backends.compiler import GPUTarget
    from triton.compiler.compiler import make_backend

    ctx = ir.context()
    ir.load_dialects(ctx)
    make_backend(GPUTarget("cuda", 90, 32)).load_dialects(ctx)
    return ctx


class TritonPipeline:
    """One compile through Triton's NVIDIA stages; holds the Triton module between stages."""

    def __init__(self, options: CudaOptions):
        from triton.backends.compiler import GPUTarget, Language
        from triton.compiler.compiler import make_backend

        self.options = options
        self.target = GPUTarget("cuda", options.arch, 32)
        self.backend = make_backend(self.target)
        self.topts = self.backend.parse_options(options.triton_options())
        self.tstages: dict = {}
        self.backend.add_stages(self.tstages, self.topts, Language.TRITON)
        self.tmeta = {"target": self.target, **self.topts.__dict__, "triton_version": triton_version()}
        self.module = None  # the Triton module the last stage left
        self.text = None  # and its text, as that stage returned it
        self.context = None

    def make_ttir(self, module, metadata: dict) -> str:
        """Stage `ttir`: the xb module printed as TTIR, parsed and optimized by Triton."""
        text = emit_ttir(module, ttir_dialect(), debug=self.options.debug, arch=self.options.arch)
        with module.context:
            metadata["host_descriptors"] = launch_descriptors(module, metadata["arg_types"])
        return self.ttir_from_text(text, metadata)

    def ttir_from_text(self, text: str, metadata: dict) -> str:
        """Triton's `ttir` stage on TTIR text (ours, or a TTIR file written elsewhere)."""
        with self._failures("ttir", metadata):
            self.context = _context()
            self.module = _parse(text, self.context, metadata["name"])
            self.module = self.tstages["ttir"](self.module, self.tmeta)
        self.text = str(self.module)
        return self.text

    def make_ttgir(self, src: str, metadata: dict) -> str:
        """Stage `ttgir`: Triton GPU IR, with layouts, for `arch` and `num_warps`."""
        with self._failures("ttgir", metadata):
            self.module = self.tstages["ttgir"](self._module(src, metadata), self.tmeta)
        self.text = str(self.module)
        return self.text

    def make_llir(self, src: str, metadata: dict) -> str:
        """Stage `llir`: LLVM IR of the Triton GPU module."""
        with self._failures("llir", metadata):
            return self.tstages["llir"](self._module(src, metadata), self.tmeta)

    def make_ptx(self, src: str, metadata: dict) -> str:
        """Stage `ptx`: PTX assembly."""
        with self._failures("ptx", metadata):
            return self.tstages["ptx"](src, self.tmeta)

    def make_cubin(self, src: str, metadata: dict) -> bytes:
        """Stage `cubin`: ptxas's binary; Triton's metadata (shared memory, kernel name) for the launcher."""
        with self._failures("cubin", metadata):
            out = self.tstages["cubin"](src, self.tmeta)
            metadata["triton"] = json.loads(json.dumps(self.tmeta, default=vars))
            metadata["ptx_name"] = self.tmeta["name"]
            return out

    def _module(self, src: str, metadata: dict):
        """The module the last stage left, or `src` parsed where it is another text (a hand-edited stage)."""
        if src != self.text:
            self.context = self.context or _context()
            self.module = _parse(src, self.context, metadata["name"])
            self.text = src
        return self.module

    @contextlib.contextmanager
    def _failures(self, ext: str, metadata: dict):
        """Triton's pass manager, LLVM or ptxas failing: an error at the kernel line it names."""
        try:
            yield
        except CompilationError:
            raise
        except Exception as e:
            raise stage_error(ext, e, metadata, self.options.arch) from None
