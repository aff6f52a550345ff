"""The examples on the simulator against their numpy references."""

from .base import ExampleNumerics


class TestSimExamples(ExampleNumerics):
    TARGET = "sim"
