"""Export: a compiled kernel as a CANN kernel-launch project, and the host-side check of it."""
