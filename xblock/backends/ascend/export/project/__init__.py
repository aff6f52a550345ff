"""The files of an exported CANN kernel-launch project besides the kernel: the host program, the
README, and, for an export made from a launch case, the data scripts, the golden and run.sh.

`gen_data.py` and `verify_result.py` are copied into exports as they are (numpy-only scripts).
"""
