"""The CPU model: building and launching kernels on emu/, the cost model, timeline and profile."""
