"""One module per hook event, and for tool events per tool (ralph.claude.dispatch.HANDLERS); each exposes `handle(call) -> Outcome`."""
