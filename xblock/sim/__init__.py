"""The numpy simulator: the reference semantics every target is checked against."""
