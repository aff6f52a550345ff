"""Every kernel the conformance tests run on ascend is also exported as a CANN project, whose main.cpp
the host check compiles against the launch header derived from its kernel.cpp (backends/ascend/
hostcheck): an export that would not build fails the test that ran the kernel. Once per distinct
kernel; XBLOCK_EXPORT_CHECK=0 turns it off. A kernel the export refuses by design (pointer tables,
whose addresses a host program cannot know: an ExportError, tests/ascend/lower/test_pointer_tables.py) is
not exported."""

from __future__ import annotations

import hashlib
import os

import pytest


@pytest.fixture(autouse=True, scope="session")
def _export_every_ascend_kernel(tmp_path_factory):
    if os.environ.get("XBLOCK_EXPORT_CHECK", "1") == "0":
        yield
        return
    from xblock.backends.ascend.export.cann import export
    from xblock.backends.ascend.model import launch

    root = tmp_path_factory.mktemp("exports")
    seen = set()
    load = launch.load

    def load_and_export(asm, metadata):
        key = hashlib.sha256(asm["cpp"].encode()).hexdigest()[:16]
        if key not in seen and not metadata.get("pointer_tables"):
            seen.add(key)
            export(asm, metadata, root / key)  # runs the host check; raises HostCheckError
        return load(asm, metadata)

    launch.load = load_and_export
    try:
        yield
    finally:
        launch.load = load
