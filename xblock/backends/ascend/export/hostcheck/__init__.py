"""Checking exported AscendC projects without CANN.

- `launch_header`: a clean-room model of the launch header (`aclrtlaunch_<kernel>.h`) that CANN's
  `ascendc_library()` derives from a kernel's entry signature, and of its launch function;
- `include/acl/`: minimal ACL declarations (what an exported main.cpp uses), from the runtime docs;
- `model/`: the ACL runtime and ascendc.cmake as models that run the kernel on xblock's AscendC
  CPU model;
- `check`: the host check (main.cpp against its kernel, g++ -fsyntax-only) and a model toolkit
  that builds and runs an export's CMakeLists.txt and run.sh unmodified.
"""

from .check import HostCheckError, check_host, model_toolkit, run_project
from .launch_header import KernelSignatureError, launch_header, parse_entries

__all__ = ["HostCheckError", "KernelSignatureError", "check_host", "launch_header", "model_toolkit",
           "parse_entries", "run_project"]
