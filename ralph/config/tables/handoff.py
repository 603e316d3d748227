"""[handoff]: what the loop does with the run branch once the run is over
(ralph.loop.handoff: push it, open a draft pull request, or write a bundle)."""
from ralph.config.schema import Key, Table

MODES = ("none", "push", "pr", "bundle")
FORGES = ("auto", "github", "gitlab")
HANDOFF_KEYS: dict[str, Key] = {
    "mode": Key("none", "choice:" + "|".join(MODES), None,
                "at the end of a run that committed: none, push (the run branch), pr (push + a draft pull request) or bundle"),
    "remote": Key("origin", "str", None, "the remote push and pr use"),
    "forge": Key("auto", "choice:" + "|".join(FORGES), None,
                 "pr: github (gh) or gitlab (glab); auto: from the remote's URL, else whichever is installed"),
    "timeout": Key(300, "number", 1, "seconds each git push or gh/glab command may take"),
}
HANDOFF_TABLE = Table("handoff", HANDOFF_KEYS, "the hand-off at the end of a run: push the run branch, open a draft pull request, or write a bundle")
