"""The 'ascend' target: not built yet in this version (see docs/STATUS.md); compiling for it says so."""

BACKEND = None
