"""Stop: outside a loop run, allowed at once; during one, the Stop gate
(ralph.claude.stop_gate, loaded only then) refuses to stop while the current
story is not done. A stop in a project with no run loads nothing more than
reading run.json."""
from ralph.claude.protocol import HookCall, Outcome, allow
from ralph.plugins import load
from ralph.run.state import load_active_run

# what a stop needs beyond run.json -> the module that judges it (gate(call, run))
GATES = {"loop run": "ralph.claude.stop_gate"}


def handle(call: HookCall) -> Outcome:
    run = load_active_run(call.state_dir)
    if run is None:
        return allow()
    return load(GATES["loop run"]).gate(call, run)
