"""ralph-loop. Read it from runner.py (the main loop) to iteration.py (one
build iteration) and planning.py; each step lives in a module of its own:
prepare, agent, guarding, verify, commit, budgets, hook_calls, recovery,
sandbox_layer; run.py holds what they share (Finish, Run, Iteration).

Nothing here is on the hook path; `ralph loop` / `ralph-loop` import it.
"""
