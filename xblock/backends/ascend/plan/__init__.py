"""Planning: what one lowering will do (rows per instance, chunks, dot mode, resident loads, row cache)."""
