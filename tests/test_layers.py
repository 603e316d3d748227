"""The layers of ralph, bottom to top, and the check that every import points
down: a module imports (or names as a string, which is how plug-in tables
hand modules to ralph.plugins.load) only modules of its own layer or of the
layers below, and no modules import one another in a circle.

Run as a script to print the layers with their modules:
`python tests/test_layers.py`.
"""
from __future__ import annotations

import ast
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "ralph"

# bottom to top: (name, what it is, the module prefixes it holds)
LAYERS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("base", "JSON, the plug-in loader, child processes, quoting, a story",
     ("ralph", "ralph.fastjson", "ralph.plugins", "ralph.process", "ralph.quoting", "ralph.story")),
    ("rules", "judgement: pure functions from facts to decisions", ("ralph.rules",)),
    ("state", "what ralph keeps on disk, and redaction", ("ralph.redaction", "ralph.state")),
    ("config", "ralph.toml: the schema, every table's declaration, reading", ("ralph.config",)),
    ("plan", "a plan's stories in its formats", ("ralph.plan", "ralph.plan_markdown", "ralph.plan_prd")),
    ("run", "a run on disk: records, settings, test history, verify, git, clock", ("ralph.run",)),
    ("safety", "the sandbox's settings, rollbacks and snapshots", ("ralph.sandbox", "ralph.rollback")),
    ("report", "the morning report", ("ralph.report",)),
    ("claude", "the hooks: the dispatcher and one handler per event", ("ralph.claude",)),
    ("mcp", "the agent's tools", ("ralph.mcp",)),
    ("loop", "ralph-loop", ("ralph.loop",)),
    ("doctor", "proving an install: a client session against a stand-in API", ("ralph.doctor",)),
    ("commands", "the command line", ("ralph.commands", "ralph.cli", "ralph.__main__")),
)

MODULE_NAME = re.compile(r"^%s(\.[A-Za-z_][A-Za-z0-9_]*)+(:[A-Za-z_][A-Za-z0-9_]*)?$" % PACKAGE)


def modules() -> dict[str, str]:
    """module name -> file, for every module of the package."""
    found = {}
    for directory, _, files in os.walk(os.path.join(ROOT, PACKAGE)):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(directory, name)
                module = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
                found[module.removesuffix(".__init__")] = path
    return found


def resolve(name: str, known: dict[str, str]) -> str | None:
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def imports(module: str, path: str, known: dict[str, str]) -> set[str]:
    """The modules `module` imports, wherever the statement stands, and those it
    names in a string ("ralph.x.y" or "ralph.x.y:NAME")."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    here = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    found: set[str | None] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(resolve(alias.name, known) for alias in node.names if alias.name.split(".")[0] == PACKAGE)
        elif isinstance(node, ast.ImportFrom):
            source = node.module or ""
            if node.level:
                parts = here.split(".")
                source = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
            if source.split(".")[0] != PACKAGE:
                continue
            for alias in node.names:
                full = f"{source}.{alias.name}"
                found.add(full if full in known else resolve(source, known))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and MODULE_NAME.match(node.value):
            found.add(resolve(node.value.split(":")[0], known))
    found.discard(None)
    found.discard(module)
    return found  # type: ignore[return-value]


def layer_of(module: str) -> int | None:
    """The index in LAYERS of the layer holding `module` (its longest prefix)."""
    best, best_length = None, -1
    for index, (_, _, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_length:
                best, best_length = index, len(prefix)
    return best


def graph() -> dict[str, set[str]]:
    known = modules()
    return {module: imports(module, path, known) for module, path in known.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def picture(edges: dict[str, set[str]]) -> str:
    """The layers, top first, each with its modules."""
    lines = []
    for index in reversed(range(len(LAYERS))):
        name, what, _ = LAYERS[index]
        members = sorted(module for module in edges if layer_of(module) == index)
        lines.append(f"{index + 1:2d} {name}: {what} ({len(members)} modules)")
        lines.append("     " + ", ".join(member.removeprefix("ralph.") for member in members))
    return "\n".join(lines)


def test_every_module_has_a_layer() -> None:
    edges = graph()
    assert not [module for module in edges if layer_of(module) is None], picture(edges)


def test_every_import_points_down() -> None:
    edges = graph()
    upward = []
    for module, targets in sorted(edges.items()):
        here = layer_of(module)
        for target in sorted(targets):
            there = layer_of(target)
            if here is not None and there is not None and there > here:
                upward.append(f"{module} ({LAYERS[here][0]}) -> {target} ({LAYERS[there][0]})")
    assert not upward, "imports that point up:\n  " + "\n  ".join(upward) + "\n\nthe layers:\n" + picture(edges)


def test_no_import_cycles() -> None:
    found = cycles(graph())
    assert not found, "modules that import one another in a circle (string-named imports count):\n  " + \
        "\n  ".join(" <-> ".join(component) for component in found)


def test_the_check_sees_string_named_imports_and_cycles() -> None:
    # the check itself: a string naming a module is an edge, and a circle through one is found
    known = {"ralph.a": "", "ralph.b": ""}
    assert resolve("ralph.a.thing", known) == "ralph.a"
    assert cycles({"ralph.a": {"ralph.b"}, "ralph.b": {"ralph.a"}, "ralph.c": {"ralph.a"}}) == [["ralph.a", "ralph.b"]]
    assert MODULE_NAME.match("ralph.run.settings:LOOP_TABLE") and not MODULE_NAME.match("ralph")
    assert layer_of("ralph.rules.guard.interp") == 1 and layer_of("ralph.run.git") == 5 and layer_of("ralph") == 0


if __name__ == "__main__":
    sys.stdout.write(picture(graph()) + "\n")
