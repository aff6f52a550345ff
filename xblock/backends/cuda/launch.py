"""Load a cubin and launch it on torch CUDA tensors: with cuLaunchKernel from C, or through Triton's launcher.

Nothing here imports MLIR: a GPU machine with torch and triton, but without the MLIR wheels, runs
kernels compiled elsewhere (a carried `XBLOCK_CACHE_DIR` or a cache bundle).

A launcher's class is `CudaLauncher` under the C helper's `CudaLaunch` (runtime/fastpath.py, where
the helper is built, hands it down through common/services.py). The first call binds to torch and
the GPU in Python and arms the C launch; from then on a call reads the tensors' `data_ptr()`, packs
the parameters (and the two scratch pointers of Triton 3.6 kernels, null) and calls `cuLaunchKernel`
on the current torch stream, without Python.
Kernels with tensor descriptors (the TMA path) launch through Triton's launcher too (`_tma_launch`): host
descriptors regrouped into one argument each, scratch memory for descriptors made in the kernel.
What it does not cover goes to `launch_python`, Triton's launcher: an argument it does not take (not
a CUDA tensor, a scalar out of its type's range), a kernel that needs scratch memory, clusters,
cooperative or PDL launches or tensor maps, launch hooks, a kernel compiled by another Triton than
3.6, a driver failure, and every launch when `XBLOCK_CUDA_TRITON_LAUNCH=1`. Arguments are checked
only when Triton's launcher rejects them, to say why.
"""

from __future__ import annotations

import ctypes
import functools
import os
from collections import namedtuple
from types import SimpleNamespace

from ...errors import LaunchError
from ..common import services


class CudaLauncher:
    """`launcher(grid3, args)` for one compiled kernel; binds to the GPU on its first call."""

    def __init__(self, cubin: bytes, metadata: dict):
        self.cubin = cubin
        self.metadata = metadata
        self.tmeta = metadata["triton"]
        self._functions: dict = {}  # device index -> CUfunction handle

    # ------------------------------------------------------------------------------- errors
    def _error(self, message: str) -> LaunchError:
        m = self.metadata
        return LaunchError(m["file"], m["line"], m["name"], message)

    def _config(self, grid) -> str:
        t = self.tmeta
        return (f"grid {tuple(grid)}, num_warps={t['num_warps']}, num_ctas={t.get('num_ctas', 1)}, "
                f"shared memory {t.get('shared', 0)} bytes, sm_{t['target']['arch']}")

    # ------------------------------------------------------------------------------- binding
    def _bind(self):
        try:
            import torch
            from triton.runtime.driver import driver
        except ImportError as e:
            raise self._error(f"running on cuda needs torch and triton: {e}") from None
        if not torch.cuda.is_available():
            raise self._error("the cuda target needs an NVIDIA GPU, and torch sees none")
        self.torch = torch
        self.driver = driver.active
        t = self.tmeta
        fields = dict(t)
        fields.setdefault("tensordesc_meta", None)
        meta = namedtuple("KernelMetadata", sorted(fields))(**fields)
        self.descriptors = self.metadata.get("host_descriptors") or []
        sig = dict(enumerate(triton_signature(self.metadata["arg_types"], self.descriptors)))
        self.packed = (t["num_warps"], t.get("num_ctas", 1), t.get("shared", 0))
        self.launcher = self.driver.launcher_cls(SimpleNamespace(constants={}, signature=sig), meta)
        self.get_stream = self.driver.get_current_stream
        get_device = getattr(torch._C, "_cuda_getDevice", None) or torch.cuda.current_device
        self.get_device = get_device
        self.multi_gpu = torch.cuda.device_count() > 1
        launch = self._make_launch()
        self._arm_c_launch()
        return launch

    def _arm_c_launch(self) -> None:
        """Arm the C launch of a launcher that has one (`arm` comes from `CudaLaunch`), unless the kernel
        needs something it does not do."""
        from triton import knobs

        arm, kinds = getattr(self, "arm", None), c_launch_kinds(self.tmeta, self.metadata["arg_types"])
        if arm is None or kinds is None or os.environ.get("XBLOCK_CUDA_TRITON_LAUNCH"):
            return
        if launch_hooks(knobs):
            return
        entries = libcuda_entries()
        if entries is not None:
            t = self.tmeta
            arm(*kinds, 32 * t["num_warps"], t.get("shared", 0), self.torch.Tensor, self.get_stream,
                self.get_device if self.multi_gpu else None, self.multi_gpu, *entries)

    def _load(self, device: int):
        """Load the cubin on `device`; check it fits the device's shared memory and thread limits."""
        t = self.tmeta
        utils = self.driver.utils
        arch = t["target"]["arch"]
        major, minor = self.torch.cuda.get_device_capability(device)
        cc = major * 10 + minor
        if major != arch // 10 or minor < arch % 10 or (arch >= 90 and cc != arch):  # sm_90a: exact
            raise self._error(f"compiled for sm_{arch}, but GPU {device} is sm_{major}{minor}: "
                              f"compile with arch={major}{minor}")
        max_shared = utils.get_device_properties(device)["max_shared_mem"]
        if t.get("shared", 0) > max_shared:
            raise self._error(f"needs {t['shared']} bytes of shared memory, GPU {device} has {max_shared}: "
                              "use smaller blocks or fewer num_stages")
        try:
            _, function, _, _, n_max_threads = utils.load_binary(t["name"], self.cubin, t.get("shared", 0), device)
        except RuntimeError as e:
            raise self._error(f"the GPU driver could not load the kernel: {e}") from None
        if t["num_warps"] * 32 > n_max_threads:
            raise self._error(f"num_warps={t['num_warps']} needs {t['num_warps'] * 32} threads per program; "
                              f"the compiled kernel allows {n_max_threads} (too many registers?)")
        self._functions[device] = function
        if getattr(self, "c_launch_armed", False):
            self.set_function(device, function)  # loaded in the current context: the C launch checks it
        return function

    def _make_launch(self):
        functions, load, get_device, get_stream = self._functions, self._load, self.get_device, self.get_stream
        launcher, packed = self.launcher, self.packed
        direct = self._direct_launch()
        if direct is not None:  # Triton 3.6's C entry point, without the Python wrapper around it
            coop, pdl = launcher.launch_cooperative_grid, launcher.launch_pdl

            def launch(grid, args):
                device = get_device()
                function = functions.get(device)
                if function is None:
                    function = load(device)
                direct(grid[0], grid[1], grid[2], get_stream(device), function, coop, pdl, None, None, packed, None,
                       None, None, *args)

            return launch

        if self.descriptors or self.tmeta.get("global_scratch_size"):
            return self._tma_launch()

        def launch(grid, args):
            device = get_device()
            function = functions.get(device)
            if function is None:
                function = load(device)
            launcher(grid[0], grid[1], grid[2], get_stream(device), function, packed, None, None, None, *args)

        return launch

    def _tma_launch(self):
        """The launch of a kernel with tensor descriptors: each host descriptor's parts become one object
        for Triton's launcher (which builds its CUtensorMap), and a kernel that makes descriptors gets its
        global scratch memory from torch unless `triton.set_allocator` set an allocator."""
        from triton.runtime import _allocation

        functions, load, get_device, get_stream = self._functions, self._load, self.get_device, self.get_stream
        launcher, packed, descriptors, torch = self.launcher, self.packed, self.descriptors, self.torch
        error = self._error

        def allocate(size, align, stream):
            return torch.empty(size, dtype=torch.int8, device="cuda")

        def launch(grid, args):
            device = get_device()
            function = functions.get(device)
            if function is None:
                function = load(device)
            args = group_descriptors(args, descriptors, self.metadata["arg_names"], error)
            token = _allocation._allocator.set(allocate) if _allocation._allocator.get() is \
                _allocation._NULL_ALLOCATOR else None
            try:
                launcher(grid[0], grid[1], grid[2], get_stream(device), function, packed, None, None, None, *args)
            finally:
                if token is not None:
                    _allocation._allocator.reset(token)

        return launch

    def _direct_launch(self):
        """Triton 3.6's compiled `launch(grid, stream, function, coop, pdl, scratch, scratch, meta, hooks, *args)`,
        usable when the kernel needs no scratch memory and no launch hooks are installed; else None."""
        from triton import __version__, knobs

        launcher, t = self.launcher, self.tmeta
        if not __version__.startswith("3.6.") or not callable(getattr(launcher, "launch", None)):
            return None
        if t.get("global_scratch_size") or t.get("profile_scratch_size") or t.get("tensordesc_meta"):
            return None
        if launch_hooks(knobs):
            return None
        return launcher.launch

    # ------------------------------------------------------------------------------- calls
    def __call__(self, grid, args):
        try:
            self._launch(grid, args)
        except LaunchError:
            raise
        except (TypeError, ValueError, RuntimeError, OverflowError) as e:
            raise self._diagnose(e, grid, args) from None

    def launch_python(self, grid, args):
        """The launch through Triton's launcher: what the C launch calls for anything it does not take."""
        return CudaLauncher.__call__(self, grid, args)

    def _launch(self, grid, args):
        """The first launch: bind to torch and the GPU, then replace itself by the bound launch."""
        launch = self._bind()
        if self.multi_gpu:
            check = self._check_devices

            def launch_checked(grid, args, launch=launch):
                check(args)
                launch(grid, args)

            self._launch = launch_checked
        else:
            self._launch = launch
        self._launch(grid, args)

    def _check_devices(self, args) -> None:
        device = self.get_device()
        for name, sig, v in zip(self.metadata["arg_names"], self.metadata["arg_types"], args):
            if sig.startswith("*") and getattr(v, "is_cuda", False) and v.device.index != device:
                raise self._error(f"argument '{name}' is on cuda:{v.device.index}, but the kernel launches on "
                                  f"the current device cuda:{device}: move it, or use torch.cuda.device(...)")

    def _diagnose(self, e: Exception, grid, args) -> LaunchError:
        """Say which argument Triton's launcher refused, or report the CUDA failure with the config."""
        if len(args) != len(self.metadata["arg_types"]):
            return self._error(f"expected {len(self.metadata['arg_types'])} runtime arguments, got {len(args)}")
        for name, sig, v in zip(self.metadata["arg_names"], self.metadata["arg_types"], args):
            if not sig.startswith("*"):
                continue
            if not hasattr(v, "data_ptr"):
                return self._error(f"argument '{name}' is a {type(v).__module__}.{type(v).__name__}; the cuda "
                                   "target takes torch CUDA tensors (or objects with data_ptr() in GPU memory)")
            device = getattr(v, "device", None)
            if device is not None and getattr(device, "type", "cuda") != "cuda":
                return self._error(f"argument '{name}' is a tensor on '{device}'; the cuda target needs it on "
                                   "the GPU: pass x.cuda(), or launch with target='cpu' or 'sim'")
        return self._error(f"launch failed ({type(e).__name__}: {e}); {self._config(grid)}")


def triton_signature(arg_types, descriptors) -> list:
    """The signature Triton's launcher takes: each host descriptor's parts (base, shape, strides) as its one
    `tensordesc<...>` entry, which Triton expands again into the CUtensorMap, shape and strides."""
    sig = list(arg_types)
    for d in reversed(descriptors):
        i, n = d["index"], d["ndim"]
        sig[i:i + 1 + 2 * n] = [d["signature"]]
    return sig


_TMA_ALIGN = 16  # bytes: a CUtensorMap's global address and every stride but the last


def group_descriptors(args, descriptors, names, error) -> list:
    """`args` with each host descriptor's parts as one object with the fields Triton's launcher reads
    (`base`, `shape`, `strides`, `padding`); TMA's alignment rules checked, naming the argument."""
    args = list(args)
    for d in reversed(descriptors):
        i, n = d["index"], d["ndim"]
        base, shape, strides = args[i], list(args[i + 1:i + 1 + n]), list(args[i + 1 + n:i + 1 + 2 * n])
        size = base.element_size() if hasattr(base, "element_size") else 1
        if base.data_ptr() % _TMA_ALIGN or any(s * size % _TMA_ALIGN for s in strides[:-1]):
            param = names[i][:-len("_base")]
            raise error(f"argument '{param}': a tensor descriptor on the TMA path needs a 16-byte aligned base and "
                        f"strides (but the last) that are multiples of 16 bytes, got strides {strides} of "
                        f"{size}-byte elements at address {base.data_ptr():#x}")
        args[i:i + 1 + 2 * n] = [SimpleNamespace(base=base, shape=shape, strides=strides, padding=d["padding"])]
    return args


def launch_hooks(knobs) -> bool:
    """Whether launch hooks are installed: Triton 3.6 keeps them in `HookChain`s, never None, whose
    `calls` list them (earlier Tritons: a callable or None)."""
    hooks = (knobs.runtime.launch_enter_hook, knobs.runtime.launch_exit_hook)
    return any(h is not None and bool(getattr(h, "calls", True)) for h in hooks)


def load(asm: dict, metadata: dict) -> CudaLauncher:
    if "triton" not in metadata:
        raise LaunchError(metadata["file"], metadata["line"], metadata["name"],
                          "this cache entry has no cubin metadata; rebuild it (clear the cache)")
    return launcher_class()(asm["cubin"], metadata)


@functools.cache
def launcher_class() -> type:
    """`CudaLauncher` under the C helper's `CudaLaunch`, whose call launches in C once armed (calls go
    to the C type's `__call__`, first in the order of bases); plain `CudaLauncher` without the helper."""
    base = services.cuda_launch_type()
    if base is None:
        return CudaLauncher
    return type("CudaLauncher", (base, CudaLauncher), {"__module__": __name__, "__doc__": CudaLauncher.__doc__})


_FLOAT_KINDS = {"fp32": ("f", 4), "fp64": ("d", 8), "fp16": ("h", 2), "bf16": ("b", 2)}
_INT_BYTES = {"1": 1, "8": 1, "16": 2, "32": 4, "64": 8}  # i1 is passed as a byte, as Triton does


def c_launch_kinds(tmeta: dict, arg_types) -> tuple[bytes, bytes] | None:
    """(kind, bytes) of each parameter for the C launch (see fastpath.C_SOURCE), or None for a kernel it
    does not launch: one compiled by another Triton than 3.6 (whose kernels end with two scratch
    pointers), or that needs scratch memory, clusters, a cooperative or PDL launch, or tensor maps."""
    if not str(tmeta.get("triton_version", "")).startswith("3.6."):
        return None
    if tmeta.get("num_ctas", 1) != 1 or tmeta.get("launch_cooperative_grid") or tmeta.get("launch_pdl"):
        return None
    if tmeta.get("global_scratch_size") or tmeta.get("profile_scratch_size") or tmeta.get("tensordesc_meta"):
        return None
    kinds, sizes = [], []
    for sig in arg_types:
        if sig.startswith("*"):
            kind, size = "p", 8
        elif sig in _FLOAT_KINDS:
            kind, size = _FLOAT_KINDS[sig]
        elif sig[:1] in ("i", "u") and sig[1:] in _INT_BYTES:
            kind, size = sig[0], _INT_BYTES[sig[1:]]
        else:
            return None
        kinds.append(kind)
        sizes.append(size)
    return "".join(kinds).encode(), bytes(sizes)


@functools.cache
def libcuda_entries() -> tuple[int, int, int] | None:
    """Addresses of cuLaunchKernel, cuCtxGetCurrent and cuFuncGetParamInfo (0 for a driver older than
    CUDA 12.4, which lacks it) in libcuda.so.1; None where the library cannot be opened."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
        launch, context = (ctypes.cast(getattr(lib, n), ctypes.c_void_p).value for n in ("cuLaunchKernel",
                                                                                        "cuCtxGetCurrent"))
    except (OSError, AttributeError):
        return None
    try:
        info = ctypes.cast(lib.cuFuncGetParamInfo, ctypes.c_void_p).value
    except AttributeError:
        info = 0
    return launch, context, info
