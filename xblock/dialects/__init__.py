"""Dialects: xb (the waist of the compiler) and, in the ascend backend, ascendc; IRDL definitions and builders."""
