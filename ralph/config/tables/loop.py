"""[loop] and [[loop.stages]]: ralph-loop's agent, verify command, budgets
and plan (read by ralph.run.settings, which also checks what only the
merged settings can tell: each stage named, names unique)."""
from ralph.config.schema import Key, Table

MODES = ("build", "plan")
EXHAUSTED_ACTIONS = ("skip", "stop")

LOOP_KEYS: dict[str, Key] = {
    "agent_command": Key("claude -p --dangerously-skip-permissions", "command", None,
                         "the agent: a string runs through /bin/sh -c, a list as is; the prompt arrives on stdin"),
    "timeout_seconds": Key(1800, "number", 1, "wall-time limit per agent run, in seconds"),
    "verify_command": Key(None, "command?", None, "must pass before a story counts as done (string or list)"),
    "verify_timeout_seconds": Key(1800, "number", 1, "wall-time limit of the verify command, in seconds"),
    "max_iterations": Key(10, "int", 1, "iterations per stage (--max-iterations also caps the whole run)"),
    "max_iterations_per_story": Key(5, "int", 0, "iterations one story may take (0: unlimited)"),
    "max_minutes_per_story": Key(60, "number", 0, "agent and verify minutes per story in this run (0: unlimited)"),
    "on_story_exhausted": Key("skip", "choice:" + "|".join(EXHAUSTED_ACTIONS), None,
                              "a story that used up its budget is marked blocked: skip moves on, stop ends the run"),
    "no_progress_limit": Key(3, "int", 0, "stop after N iterations in a row with no commit and no story state change (0: never)"),
    "plan": Key(None, "path?", None, "the plan file (default: .ralph/plan.md, .ralph/prd.json or the newest .ralph/PRD-N/)"),
    "progress": Key(None, "path?", None, "the progress notes (default: progress.md beside the plan)"),
    "prompt": Key(None, "path?", None, "prompt template of build iterations (default: the packaged PROMPT.md)"),
    "plan_prompt": Key(None, "path?", None, "prompt template of plan iterations (default: the packaged one)"),
    "rollback_on_verify_fail": Key(True, "bool", None, "a failed verify saves the work to a ref and resets the tree to the checkpoint"),
    # guard denials in one iteration that end it (0: never); iterations of one
    # story ended that way before the story is marked blocked (0: never)
    "max_guard_denials": Key(5, "int", 0, "push/merge guard denials that end an iteration (0: never)"),
    "max_stuck_iterations": Key(2, "int", 0, "iterations of one story ended by denials before it is blocked (0: never)"),
    "skill_shell": Key(False, "bool", None, "let skills' and slash commands' inline shell lines (!`cmd`) run in the agent's session "
                       "(each still judged by the guard); false sets Claude Code's disableSkillShellExecution"),
    "agent_tools": Key(True, "bool", None, "give a Claude Code agent the tools of `ralph mcp` (complete_story, report_blocked, "
                       "request_merge, story_status); needs ralph-hooks[mcp]"),
    # the overnight run: budgets (the client's cost estimate), usage-limit waits, transient retries, hangs
    "max_cost_usd": Key(None, "number?", 0, "stop the run (finish budget) once its agents cost this much, in USD (the client's estimate)"),
    "max_cost_usd_per_story": Key(None, "number?", 0, "mark a story blocked once its iterations cost this much, in USD"),
    "max_tokens": Key(None, "int?", 0, "stop the run (finish budget) once its agents used this many input + output tokens"),
    "retry_backoff_seconds": Key(60, "number", 0, "first wait after a usage limit without a reset time, or a transient API error; doubles each time"),
    "max_wait_minutes": Key(360, "number", 0, "the longest the run waits for usage limits in a row before it finishes rate_limited"),
    "max_transient_retries": Key(5, "int", 0, "retries in a row after transient API errors (529, 5xx, connection lost) before one counts as a failure"),
    "idle_timeout_seconds": Key(600, "number", 0, "an agent that prints nothing this long is hung: its group is ended, the iteration retried once (0: never)"),
    "mode": Key("build", "choice:" + "|".join(MODES), None, "build or plan: used when no stages are configured"),
    "branch": Key("auto", "str", None, 'the branch the run commits on: "auto" (ralph/<plan name>, or prd.json\'s branchName), '
                  '"current" (the checked-out branch) or a branch name'),
    "stages": Key(None, "tables", None, "a pipeline of stages: [[loop.stages]] tables, run in order"),
}
STAGE_KEYS: dict[str, Key] = {
    "name": Key(None, "str", None, "the stage's name (unique)"),
    "mode": Key("build", "choice:" + "|".join(MODES), None, "build or plan"),
    "max_iterations": Key(None, "int?", 1, "iterations of this stage (default: [loop] max_iterations)"),
    "prompt": Key(None, "path?", None, "its prompt template (default: [loop] prompt or plan_prompt)"),
    "verify_command": Key(None, "command?", None, "its verify command (default: [loop] verify_command in build mode)"),
    "agent_command": Key(None, "command?", None, "its agent (default: [loop] agent_command)"),
    "timeout_seconds": Key(None, "number?", 1, "seconds one agent run may take (default: [loop] timeout_seconds)"),
}

STAGE_TABLE = Table("loop.stages", STAGE_KEYS, "one stage of a pipeline; unset keys take [loop]'s", array=True)
LOOP_TABLE = Table("loop", LOOP_KEYS, "ralph-loop: the agent, the verify command, budgets and the plan", parts=(STAGE_TABLE,))
