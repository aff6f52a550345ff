"""Load a cubin and launch it through Triton's compiled-kernel launcher, on torch CUDA tensors.

Nothing here imports MLIR: a GPU machine with torch and triton, but without the MLIR wheels, runs
kernels compiled elsewhere (a carried `XBLOCK_CACHE_DIR` or a cache bundle). The hot path is the
launcher call; arguments are checked only when Triton's launcher rejects them, to say why.
"""

from __future__ import annotations

from collections import namedtuple
from types import SimpleNamespace

from ...errors import LaunchError


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
        sig = {i: s for i, s in enumerate(self.metadata["arg_types"])}
        self.packed = (t["num_warps"], t.get("num_ctas", 1), t.get("shared", 0))
        self.launcher = self.driver.launcher_cls(SimpleNamespace(constants={}, signature=sig), meta)
        self.get_stream = self.driver.get_current_stream
        get_device = getattr(torch._C, "_cuda_getDevice", None) or torch.cuda.current_device
        self.get_device = get_device
        self.multi_gpu = torch.cuda.device_count() > 1
        return self._make_launch()

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

        def launch(grid, args):
            device = get_device()
            function = functions.get(device)
            if function is None:
                function = load(device)
            launcher(grid[0], grid[1], grid[2], get_stream(device), function, packed, None, None, None, *args)

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
        if knobs.runtime.launch_enter_hook is not None or knobs.runtime.launch_exit_hook is not None:
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


def load(asm: dict, metadata: dict) -> CudaLauncher:
    if "triton" not in metadata:
        raise LaunchError(metadata["file"], metadata["line"], metadata["name"],
                          "this cache entry has no cubin metadata; rebuild it (clear the cache)")
    return CudaLauncher(asm["cubin"], metadata)
