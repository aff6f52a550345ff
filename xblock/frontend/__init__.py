"""The frontend: Python AST of a kernel (xblock or triton language) to the xb dialect."""
