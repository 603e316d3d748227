"""The morning report of a ralph-loop run.

- model: the report as data, a pure function of `.ralph/events.jsonl` and
  `.ralph/run.json` (the `--format json` output);
- page: one self-contained HTML page with inline SVG charts;
- markdown: the same in Markdown, and its short summary (a pull request's body);
- files: reading the records and writing `.ralph/runs/<run>/report.html`.

The loop writes the page at the end of every run (ralph.loop.delivery);
`ralph report` writes or prints it on demand.
"""
