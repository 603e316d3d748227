"""The one lazy import: plug-in tables name their modules as strings.

Every table that picks code by a key (event -> handler, program -> model,
runner -> reader, command -> module, table -> declaration) names it as
"package.module" or "package.module:NAME", and load() imports it the first
time a call needs it, so a call loads only what its key needs. A plug-in
imports the small base module it builds on, never the table that loads it.
"""
import sys


def load(name: str) -> object:
    """The module `name` ("ralph.x.y"), or its attribute for "ralph.x.y:NAME", imported now."""
    module, _, attribute = name.partition(":")
    loaded = sys.modules.get(module)
    if loaded is None:
        # not importlib.import_module: importing importlib costs a hook call more than this
        __import__(module)
        loaded = sys.modules[module]
    return getattr(loaded, attribute) if attribute else loaded
