"""ralph-loop internals: settings, prompts, processes, events, display, runner.

Nothing here is on the hook path; `ralph loop` / `ralph-loop` import it.
"""
