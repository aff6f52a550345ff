"""Every example on the cpu target, against numpy and the sim, at the same boundary sizes."""

import shutil

from tests.numerics.base import ExampleNumerics


class TestCpuExamples(ExampleNumerics):
    TARGET = "cpu"

    def skip_reason(self):
        if shutil.which("gcc") is None:
            return "the cpu target links with gcc, which is not installed"
        return None
