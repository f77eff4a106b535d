"""The solver: every framework, toolkit and driver fix is a stack change, re-checked through the resolver before
it is shown, and ranked by the size of the change (compat.solver.solve)."""
