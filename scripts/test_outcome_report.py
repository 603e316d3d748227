#!/usr/bin/env python3
"""Score the test-outcome verdict on the captured corpus, by group.

usage: scripts/test_outcome_report.py [--group tuned|holdout|nontest|...] [--show-misses]

Groups come from each fixture's `group` field (set by
scripts/capture_runner_outputs.py for the round-two and round-three
captures); fixtures without one are "reader" (runners with a dedicated
reader). "unseen_tuned" and "unseen_holdout" are runners no rule was written
for (the holdout ones were looked at only after the rules were). Prints, per
group: failing runs caught (recall of `fail`), precision of `fail` (no passing
run or non-test command judged `fail`), precision of `pass` (no failing run
judged `pass`), and every verdict outside expect+accept.
"""
from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from ralph.rules.outcome.verdict import judge_test_run  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--group", default="")
    ap.add_argument("--show-misses", action="store_true")
    args = ap.parse_args(argv)
    rows: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    misses: list[str] = []
    for path in sorted((REPO / "tests" / "fixtures" / "test_outcome").glob("*/*.json")):
        f = json.loads(path.read_text())
        group = f.get("group", "reader")
        if args.group and group != args.group:
            continue
        got = judge_test_run(f["command"], f["exit_code"], f["output"]).verdict
        want = f["expect"]
        c = rows[group]
        c["cases"] += 1
        if want == "fail":
            c["failing"] += 1
            c["caught"] += got == "fail"
        if got == "fail":
            c["judged_fail"] += 1
            c["false_fail"] += want != "fail"
        if got == "pass":
            c["judged_pass"] += 1
            c["false_pass"] += want != "pass"
        if got != want and got not in f.get("accept", []):
            c["wrong"] += 1
        if got != want:
            misses.append(f"{group:14} {path.parent.name}/{path.stem}: want {want}, got {got}  [{f['command']}]")
    for group, c in sorted(rows.items()):
        precision = 1.0 if not c["judged_fail"] else (c["judged_fail"] - c["false_fail"]) / c["judged_fail"]
        pass_precision = 1.0 if not c["judged_pass"] else (c["judged_pass"] - c["false_pass"]) / c["judged_pass"]
        recall = f"{c['caught'] / c['failing']:.2f}" if c["failing"] else "-"
        print(f"{group:14} cases={c['cases']:4} failing runs caught {c['caught']}/{c['failing']} ({recall})  "
              f"fail precision {precision:.2f} ({c['false_fail']} false)  pass precision {pass_precision:.2f} ({c['false_pass']} false)  "
              f"outside expect+accept: {c['wrong']}")
    if args.show_misses:
        print("\n".join(misses))
    return 0


if __name__ == "__main__":
    sys.exit(main())
