"""request_merge(story_id, summary): the agent's way to ask for its work to
go upstream, instead of `git push`. It records the request
(`.ralph/merge_requests.jsonl`, and a `merge_requested` event) and never
pushes or merges: the loop's hand-off acts on the requests when the run ends,
and `ralph status` shows them.
"""
from __future__ import annotations

from ralph.mcp.context import Answer, ToolContext
from ralph.run import tool_calls as records
from ralph.run.records import append_event

NAME = "request_merge"
DESCRIPTION = (
    "Ask for your work to be pushed or merged upstream. Use it instead of `git push`, `gh pr create` or a merge, "
    "which are denied. It records the request for the person and the loop's end-of-run hand-off; nothing is pushed "
    "now. Carry on with the story afterwards (complete_story when it is done)."
)
ARGUMENTS = {
    "story_id": "The current story's id, exactly as in the plan (e.g. US-001).",
    "summary": "What should go upstream and why (one or two sentences).",
}


def request_merge(ctx: ToolContext, story_id: str, summary: str) -> Answer:
    if ctx.story_id is None:
        return Answer(ctx.no_story() + " Nothing was recorded: outside a loop run, ask the person to push or merge.", True)
    refused = ctx.wrong_story(story_id)
    if refused:
        return Answer(refused, True)
    run = ctx.run
    assert run is not None
    at = records.utc_now()
    request = {"run_id": run.run_id, "iteration": run.iteration, "story": run.story_id, "summary": summary.strip(), "at": at}
    records.append_merge_request(ctx.state_dir, request)
    append_event(ctx.state_dir, {"event": "merge_requested", **request})
    count = len(records.merge_requests(ctx.state_dir, run.run_id))
    return Answer(
        f"Merge request recorded for {run.story_id} in {ctx.shown(records.merge_requests_path(ctx.state_dir))} "
        f"({count} in this run). Nothing was pushed or merged: the person, or the loop's hand-off when the run ends, "
        "takes it from here. Do not push; carry on with the story."
    )
