"""Scripts already on disk that a command runs (`./deploy.sh`, `bash x.sh`,
`python tool.py`, a script a task runner or git setting names): read through
the project reader (Analysis.read_project_file) and judged as the commands
they are. What such a file pushes, merges or destroys counts as the command's
own; what the guard cannot tell about it blocks only when the file itself
mentions push/merge/pull (absorb), because a project's own files are full of
code the guard cannot follow that never comes near a push.
"""
from ralph.rules.guard.interp import RUN_PLAINLY, Analysis
from ralph.rules.guard.programs.facts import SHELLS
from ralph.rules.guard.state import Scope, normalize_program, program_name, show


def run_file_on_disk(analysis: Analysis, text: str, path: str, scope: Scope, stdin: str | None, where: str,
                     interpreter: str = "") -> str | None:
    """A script already on disk (written by an earlier tool call, or part of
    the project): what it pushes, merges or destroys counts as this
    command's; what the guard cannot tell about it blocks only when its
    own text mentions push/merge/pull."""
    analysis.note(where, f"reads {show(path)} from disk")
    probe = analysis.probe()
    probe.call_depth = analysis.call_depth
    if interpreter and interpreter not in SHELLS:
        probe.model("shells").judge_code(probe, interpreter, text, scope, f"{where} > {show(path)}", args=scope.positional or [],
                                            from_disk=True)
    else:
        probe.run_script(text, scope, stdin, f"{where} > {show(path)}")
    absorb(analysis, probe, text, where)
    return None


def absorb(analysis: Analysis, probe: Analysis, text: str, where: str) -> None:
    """Take over what a probe of a file on disk found (see run_file_on_disk)."""
    analysis.blocks.extend(probe.blocks)
    analysis.saves.extend(probe.saves)
    analysis.allow_rule = analysis.allow_rule or probe.allow_rule
    for line in probe.trace:
        analysis.note("", line)
    if probe.unsure:
        strict, why, inner, rule, advice = probe.unsure[0]
        if analysis.policy.mentions_push(text):
            analysis.unsure.append((True, why, inner, rule, advice or RUN_PLAINLY))
            analysis.note(where, f"UNSURE [{rule}] in a file that mentions push/merge/pull: {why}")
        else:
            analysis.note(where, f"unsure parts in a file that never mentions push/merge/pull ({why}): not counted")


def run_program_on_disk(analysis: Analysis, text: str, argv: list[str], stdin: str | None, scope: Scope, where: str) -> str | None:
    """`./deploy.sh`: a script on disk run as a program, by its `#!` line
    (a shell script without one; a binary is not read)."""
    if "\x00" in text[:2048]:
        analysis.note(where, f"runs {show(argv[0])}, a binary")
        return None
    interpreter = ""
    if text.startswith("#!"):
        words = text[2:].split("\n", 1)[0].split()
        while words and (program_name(words[0]) == "env" or words[0].startswith("-")):
            words = words[1:]
        interpreter = normalize_program(program_name(words[0]) or "") if words else ""
        if interpreter not in SHELLS and analysis.models.program_model(interpreter) != (analysis.models.SHELL_MODELS, "run_interpreter"):
            analysis.note(where, f"runs {show(argv[0])} with {interpreter or 'an unknown program'} (not judged)")
            return None
    inner = scope.fork()
    inner.positional = list(argv[1:])
    return run_file_on_disk(analysis, text, argv[0], inner, stdin, where, interpreter)
