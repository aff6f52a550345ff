"""Lowering: the walk that turns an xb kernel into the ascendc dialect, its context and rule table."""
