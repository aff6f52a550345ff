"""The rule modules: one lowering rule per xb op, registered in the rule table as they load."""
