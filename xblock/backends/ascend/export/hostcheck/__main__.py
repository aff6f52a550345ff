"""`python -m xblock.backends.ascend.export.hostcheck`: the model toolkit's generator, and checks of an export.

    launch --soc SOC_VERSION --header-dir D [--source-dir D] KERNEL...   (called by the model ascendc.cmake)
    check PROJECT          compile main.cpp against its kernel's launch header and the ACL declarations
    run PROJECT            build and run the project (run.sh) on a model toolkit made in a temporary folder
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from .check import HostCheckError, check_host, model_toolkit, run_project, soc_by_version, write_launch_files


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m xblock.backends.ascend.export.hostcheck", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    sp = sub.add_parser("launch", help="write the launch headers (and model launch sources) of kernel sources")
    sp.add_argument("--soc", required=True, help="SOC_VERSION, e.g. Ascend910B3")
    sp.add_argument("--header-dir", required=True, type=Path)
    sp.add_argument("--source-dir", type=Path)
    sp.add_argument("kernels", nargs="+", type=Path)
    for name in ("check", "run"):
        sub.add_parser(name).add_argument("project", type=Path)
    args = p.parse_args(argv)
    try:
        if args.command == "launch":
            soc = soc_by_version(args.soc)
            for k in args.kernels:
                write_launch_files(k, args.header_dir, args.source_dir, soc)
        elif args.command == "check":
            print(f"ok: {check_host(args.project)}")
        else:
            with tempfile.TemporaryDirectory(prefix="xblock-toolkit-") as tmp:
                res = run_project(args.project, model_toolkit(tmp))
            sys.stdout.write(res.stdout)
            sys.stderr.write(res.stderr)
            return res.returncode
    except (HostCheckError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
