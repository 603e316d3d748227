"""`ralph report [RUN_ID] [--format html|md|json] [--open]`: a run's report,
from `.ralph/events.jsonl` and `.ralph/run.json` (default: the last run).

html (the default) writes `.ralph/runs/<run>/report.html` (the page
ralph-loop writes at the end of every run) and prints its path; md prints
the report in Markdown, json the report's data, for scripts. `--open` opens
the page in the browser. RUN_ID may be shortened to a unique prefix."""
from __future__ import annotations

import argparse
import json
import os
import sys
import webbrowser

from ralph.report import files, markdown
from ralph.state.locations import STATE_DIR_NAME, project_root


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="ralph report", description=__doc__.split("\n\n")[0].split(": ", 1)[1])
    parser.add_argument("run_id", nargs="?", metavar="RUN_ID", help="the run (default: the last one); a unique prefix will do")
    parser.add_argument("--format", choices=("html", "md", "json"), default="html",
                        help="html: write .ralph/runs/<run>/report.html and print its path; md, json: print the report")
    parser.add_argument("--open", action="store_true", help="write the html report and open it in the browser")
    parser.add_argument("-C", "--directory", metavar="DIR", help="project directory (default: the current one)")
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    root = os.path.abspath(args.directory) if args.directory else project_root(os.getcwd())
    state_dir = os.path.join(root, STATE_DIR_NAME)
    try:
        model = files.load(state_dir, args.run_id)
    except files.NoRun as e:
        sys.stderr.write(f"ralph report: {e}\n")
        return 1
    if args.format == "json" and not args.open:
        sys.stdout.write(json.dumps(model, indent=2, ensure_ascii=False) + "\n")
        return 0
    if args.format == "md" and not args.open:
        sys.stdout.write(markdown.render(model))
        return 0
    try:
        path = files.write_html(state_dir, model)
    except (OSError, files.NoRun) as e:
        sys.stderr.write(f"ralph report: cannot write the report: {e}\n")
        return 1
    sys.stdout.write(f"{os.path.relpath(path)}\n")
    if args.open and not webbrowser.open("file://" + os.path.abspath(path)):
        sys.stderr.write(f"ralph report: no browser could be started; open {path}\n")
    return 0
