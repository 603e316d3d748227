"""Lifecycle hooks for ralph-loop: the points and their context (points.py,
context.py), `when` conditions (condition.py), config loading and validation
(config.py), the action table (actions.py) with the shell action (shell.py,
process.py), the pending pipe_output buffer (pending.py), and the one entry,
`Engine.fire(point, context)` (engine.py).

Only the loop and the `ralph hooks` / `ralph init` commands import this
package; the hook path (`ralph pre-tool`, ...) never does.
"""
