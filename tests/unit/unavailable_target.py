BACKEND = None  # a registered target that is not available (for tests)
