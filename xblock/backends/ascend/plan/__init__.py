"""Planning: the plan of one lowering (`AscendPlan`), the planner choosing it, the resident and row-cache UB plans."""
