"""The docs hold to the code, both ways: every `ralph.toml` key and its
default (docs/configuration.md), every `ralph-loop` flag and finish type with
its exit code (docs/loop.md), every lifecycle hook point and its aliases
(docs/lifecycle-hooks.md), every command (docs/commands.md); and every link,
file path and module the pages and the README name exists.

The tables read here follow a marker comment (`<!-- keys: loop -->`,
`<!-- flags: ralph-loop -->`, `<!-- finish types -->`, `<!-- hook points -->`,
`<!-- commands -->`); the names in a table's first column are in backticks.
What the code declares comes from one small function per kind
(code_config_tables, code_loop_flags, code_finish_exits, code_hook_points,
code_commands)."""
from __future__ import annotations

import contextlib
import importlib
import importlib.util
import io
import json
import os
import re
import tomllib

import pytest

from ralph import cli
from ralph.claude.protocol import SUBCOMMANDS
from ralph.commands import loop as loop_command
from ralph.config.registry import tables
from ralph.loop.lifecycle import points

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(REPO, "docs")
CONFIGURATION = os.path.join(DOCS, "configuration.md")
LOOP = os.path.join(DOCS, "loop.md")
LIFECYCLE = os.path.join(DOCS, "lifecycle-hooks.md")
COMMANDS = os.path.join(DOCS, "commands.md")
# where FINISH_EXIT may live (the loop's run state, or the runner before it)
FINISH_MODULES = ("ralph.loop.run", "ralph.loop.runner")


# ---- what the code declares ------------------------------------------------


def code_config_tables() -> dict[str, dict[str, object]]:
    """Each `ralph.toml` table -> {key: default}, as the code declares it
    (ralph.config.registry.tables()). Table names: the TOML table (`loop`,
    `loop.stages`, `hooks.event`), and for lifecycle hooks `hooks.<point>`
    (the keys every type has) and `hooks.<point> type=<type>` (each action
    type's own)."""
    found: dict[str, dict[str, object]] = {}
    for table in tables():
        name = table.name
        if table.variant:
            name += " type=" + table.variant.split("=", 1)[1].strip().strip('"')
        found[name] = {key: spec.default for key, spec in table.keys.items()}
    return found


def code_loop_flags() -> set[str]:
    """`ralph-loop`'s option strings, as its argparse parser prints them."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as exited:
        loop_command.main(["--help"])
    assert exited.value.code == 0, out.getvalue()
    options = out.getvalue().split("\noptions:\n", 1)[1]
    flags = set()
    for line in options.splitlines():
        if line.startswith("  -"):
            invocation = re.split(r"\s{2,}", line.strip())[0]
            flags |= {part.split(" ")[0] for part in invocation.split(", ")}
    return flags


def finish_module() -> object:
    for name in FINISH_MODULES:
        if importlib.util.find_spec(name) is not None:
            module = importlib.import_module(name)
            if hasattr(module, "FINISH_EXIT"):
                return module
    raise AssertionError(f"FINISH_EXIT is in none of {FINISH_MODULES}: say where it lives now")


def code_finish_exits() -> dict[str, set[int]]:
    """Each finish type of `ralph-loop` -> its exit codes: FINISH_EXIT, and
    every type the loop raises (`manual` exits 128 + the signal that stopped
    it; a type FINISH_EXIT lacks exits 1)."""
    module = finish_module()
    exits = {name: {code} for name, code in module.FINISH_EXIT.items()}
    raised = set()
    for directory, dirs, files in os.walk(os.path.join(REPO, "ralph")):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in files:
            if name.endswith(".py"):
                with open(os.path.join(directory, name), encoding="utf-8") as f:
                    raised |= set(re.findall(r"\bFinish\(\s*\"(\w+)\"", f.read()))
    assert raised, "no `Finish(\"type\", ...)` found under ralph/: say how the loop ends now"
    for name in raised - exits.keys():
        exits[name] = {128 + signum for signum in module.SIGNAL_NAMES} if name == "manual" else {1}
    return exits


def code_hook_points() -> dict[str, set[str]]:
    """Each lifecycle hook point -> its aliases."""
    return {point: {alias for alias, target in points.ALIASES.items() if target == point} for point in points.POINTS}


def code_commands() -> tuple[set[str], dict[str, set[str]]]:
    """The commands (`ralph demo`, ..., `ralph-loop`) and, for the commands
    whose subcommands `ralph --help` names, those (`sandbox` -> print,
    explain, check)."""
    words = set(cli.COMMANDS) | {name for name, event in SUBCOMMANDS.items() if name != event}
    subcommands: dict[str, set[str]] = {}
    for line in cli.USAGE.splitlines():
        if not line.startswith("  ") or line.startswith("   "):
            continue
        spec = re.split(r"\s{2,}", line.strip())[0].split()
        if not re.fullmatch(r"[a-z][a-z-]*", spec[0]):
            continue
        words.add(spec[0])
        if len(spec) > 1 and re.fullmatch(r"[a-z|]+", spec[1]):
            subcommands.setdefault(spec[0], set()).update(spec[1].split("|"))
    with open(os.path.join(REPO, "pyproject.toml"), "rb") as f:
        scripts = {os.path.basename(path) for path in tomllib.load(f)["tool"]["setuptools"]["script-files"]}
    assert "ralph" in scripts, scripts
    return {f"ralph {word}" for word in words} | (scripts - {"ralph"}), subcommands


# ---- what the docs say -----------------------------------------------------


def read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def cells(line: str) -> list[str]:
    """A markdown table row's cells (`\\|` inside a cell is a `|`)."""
    return [cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def names(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def marked_tables(path: str) -> dict[str, list[list[str]]]:
    """Marker text -> the rows (cells) of the table right after it."""
    lines = read(path).splitlines()
    tables: dict[str, list[list[str]]] = {}
    for number, line in enumerate(lines):
        marker = re.fullmatch(r"<!-- (.+?) -->", line.strip())
        if not marker or marker.group(1).startswith(("/", "example:")):
            continue
        rows = []
        for row in lines[number + 1:]:
            if not row.startswith("|"):
                break
            rows.append(cells(row))
        where = f"{os.path.relpath(path, REPO)}:{number + 1}"
        assert len(rows) > 2 and set(rows[1]) <= {"---"}, f"{where}: {line.strip()} is not followed by a table"
        assert marker.group(1) not in tables, f"{where}: a second {line.strip()}"
        tables[marker.group(1)] = rows[2:]
    return tables


def documented_config_tables() -> dict[str, dict[str, str]]:
    """Each table of docs/configuration.md -> {key: its default cell}."""
    tables = {}
    for marker, rows in marked_tables(CONFIGURATION).items():
        assert marker.startswith("keys: "), f"docs/configuration.md: unknown marker <!-- {marker} -->"
        table = tables.setdefault(marker[len("keys: "):], {})
        for row in rows:
            assert names(row[0]), f"docs/configuration.md [{marker}]: a row without a `key`: {row}"
            for key in names(row[0]):
                assert key not in table, f"docs/configuration.md [{marker}]: {key} twice"
                table[key] = row[1]
    return tables


def toml_literal(value: object) -> str | None:
    """A default as ralph.toml spells it; None for "no default"."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(str(toml_literal(item)) for item in value) + "]"
    if isinstance(value, dict) and not value:
        return "{}"
    raise AssertionError(f"no TOML spelling for the default {value!r}: teach toml_literal")


def compare(what: str, code: set, documented: set, page: str) -> list[str]:
    problems = [f"{what} {name}: in the code, missing from {page}" for name in sorted(code - documented)]
    problems += [f"{what} {name}: in {page}, not in the code" for name in sorted(documented - code)]
    return problems


# ---- the tests -------------------------------------------------------------


def test_every_config_key_is_documented_with_its_default_and_every_documented_key_exists() -> None:
    code = code_config_tables()
    documented = documented_config_tables()
    page = "docs/configuration.md"
    problems = compare("table", set(code), set(documented), page + " (a `<!-- keys: TABLE -->` table)")
    for table in sorted(code.keys() & documented.keys()):
        problems += compare(f"[{table}]", set(code[table]), set(documented[table]), page)
        for key in sorted(code[table].keys() & documented[table].keys()):
            literal = toml_literal(code[table][key])
            cell = documented[table][key]
            shown = names(cell)[0] if names(cell) else cell
            if literal is not None and shown != literal:
                problems.append(f"[{table}] {key}: the default is {literal} in the code, {page} says {cell!r}")
    assert not problems, "\n".join(problems)


def test_every_loop_flag_is_documented_and_every_documented_flag_exists() -> None:
    (rows,) = [rows for marker, rows in marked_tables(LOOP).items() if marker == "flags: ralph-loop"] or [None]
    assert rows is not None, "docs/loop.md has no <!-- flags: ralph-loop --> table"
    documented = {name.split(" ")[0] for row in rows for name in names(row[0])}
    assert all(flag.startswith("-") for flag in documented), documented
    problems = compare("ralph-loop flag", code_loop_flags(), documented, "docs/loop.md")
    assert not problems, "\n".join(problems)


def test_every_finish_type_is_documented_with_its_exit_codes() -> None:
    rows = marked_tables(LOOP).get("finish types")
    assert rows is not None, "docs/loop.md has no <!-- finish types --> table"
    code = code_finish_exits()
    documented = {names(row[0])[0]: {int(n) for n in re.findall(r"\d+", row[1])} for row in rows if names(row[0])}
    problems = compare("finish type", set(code), set(documented), "docs/loop.md")
    for name in sorted(code.keys() & documented.keys()):
        if code[name] != documented[name]:
            problems.append(f"finish type {name}: exits {sorted(code[name])} in the code, docs/loop.md says {sorted(documented[name])}")
    usage = [row for row in rows if row[0] == "(usage)"]
    if [{int(n) for n in re.findall(r"\d+", row[1])} for row in usage] != [{loop_command.EXIT_USAGE}]:
        problems.append(f"docs/loop.md: the (usage) row must say exit {loop_command.EXIT_USAGE}, got {usage}")
    assert not problems, "\n".join(problems)


def test_every_hook_point_is_documented_with_its_aliases() -> None:
    rows = marked_tables(LIFECYCLE).get("hook points")
    assert rows is not None, "docs/lifecycle-hooks.md has no <!-- hook points --> table"
    code = code_hook_points()
    documented = {names(row[0])[0]: set(names(row[2])) for row in rows}
    problems = compare("hook point", set(code), set(documented), "docs/lifecycle-hooks.md")
    for point in sorted(code.keys() & documented.keys()):
        problems += compare(f"hook point {point}: alias", code[point], documented[point], "docs/lifecycle-hooks.md")
    assert not problems, "\n".join(problems)


def test_every_command_is_documented_and_every_documented_command_exists() -> None:
    rows = marked_tables(COMMANDS).get("commands")
    assert rows is not None, "docs/commands.md has no <!-- commands --> table"
    commands, subcommands = code_commands()
    documented: set[str] = set()
    documented_subcommands: dict[str, set[str]] = {}
    for row in rows:
        words = names(row[0])[0].split()
        if words[0] != "ralph":
            documented.add(words[0])
            continue
        documented.add(f"ralph {words[1]}")
        if len(words) > 2 and re.fullmatch(r"[a-z][a-z-]*", words[2]):
            documented_subcommands.setdefault(words[1], set()).add(words[2])
    problems = compare("command", commands, documented, "docs/commands.md")
    for command, subs in sorted(subcommands.items()):
        problems += compare(f"ralph {command}", subs, documented_subcommands.get(command, set()), "docs/commands.md")
    assert not problems, "\n".join(problems)


# ---- links, paths and modules ------------------------------------------------


def pages() -> list[str]:
    found = [os.path.join(REPO, "README.md")]
    found += sorted(os.path.join(DOCS, name) for name in os.listdir(DOCS) if name.endswith(".md"))
    return found


def anchors(path: str) -> set[str]:
    """The heading anchors GitHub makes for a markdown file."""
    seen: dict[str, int] = {}
    result = set()
    in_code = False
    for line in read(path).splitlines():
        if line.startswith("```"):
            in_code = not in_code
        heading = None if in_code else re.match(r"#{1,6} (.+)", line)
        if heading:
            slug = re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower()).replace(" ", "-")
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            result.add(slug if count == 0 else f"{slug}-{count}")
    return result


def test_links_between_pages_resolve() -> None:
    problems = []
    for page in pages():
        for target in re.findall(r"\]\(([^)\s]+)\)", read(page)):
            if re.match(r"[a-z]+:", target):
                continue
            file, _, anchor = target.partition("#")
            path = os.path.normpath(os.path.join(os.path.dirname(page), file)) if file else page
            where = os.path.relpath(page, REPO)
            if not os.path.exists(path):
                problems.append(f"{where}: link to {target}: no such file")
            elif anchor and anchor not in anchors(path):
                problems.append(f"{where}: link to {target}: no such heading in {os.path.relpath(path, REPO)}")
    assert not problems, "\n".join(problems)


def test_named_files_and_modules_exist() -> None:
    """A path (`ralph/...`, `tests/...`, `scripts/...`, `bin/...`, `hooks/...`)
    or module (`ralph.x.y`, perhaps ending in a name it defines) in
    backticks names something that is there: when code moves, this lists
    the pages to update."""
    problems = []
    for page in pages():
        where = os.path.relpath(page, REPO)
        for name in set(re.findall(r"`([^`\s]+)`", read(page))):
            if re.match(r"(ralph|tests|scripts|bin|hooks|docs)/", name):
                path = name.split("<", 1)[0].split("{", 1)[0]
                if not os.path.exists(os.path.join(REPO, path)):
                    problems.append(f"{where}: `{name}`: no such file")
            elif re.fullmatch(r"ralph(\.\w+)+", name) and name != "ralph.toml" and not resolves(name):
                problems.append(f"{where}: `{name}`: no such module or name")
    assert not problems, "\n".join(problems)


def resolves(dotted: str) -> bool:
    """A module, or a module and a name defined in it."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        module_name = ".".join(parts[:cut])
        try:
            spec = importlib.util.find_spec(module_name)
        except ModuleNotFoundError:
            spec = None
        if spec is None:
            continue
        value: object = importlib.import_module(module_name)
        for attribute in parts[cut:]:
            if not hasattr(value, attribute):
                return False
            value = getattr(value, attribute)
        return True
    return False


def test_the_mutation_run_of_the_rollback_takes_every_test_file_that_drives_it() -> None:
    """scripts/mutate.py --safety runs, for capture.py and restore.py, every
    test file that imports the rollback's entry points, and
    docs/development.md names those files."""
    spec = importlib.util.spec_from_file_location("mutate", os.path.join(REPO, "scripts", "mutate.py"))
    mutate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mutate)  # type: ignore[union-attr]
    driving = set()
    for name in sorted(os.listdir(os.path.join(REPO, "tests"))):
        if name.startswith("test_") and name.endswith(".py"):
            with open(os.path.join(REPO, "tests", name), encoding="utf-8") as f:
                if re.search(r"(?m)^from ralph\.rollback\.(?:restore|capture) import", f.read()):
                    driving.add(f"tests/{name}")
    assert "tests/test_rollback_hardening.py" in driving
    with open(os.path.join(DOCS, "development.md"), encoding="utf-8") as f:
        development = f.read()
    for module in ("ralph/rollback/capture.py", "ralph/rollback/restore.py"):
        assert driving <= set(mutate.SAFETY[module]), (module, driving - set(mutate.SAFETY[module]))
        assert all(f"`{path}`" in development for path in mutate.SAFETY[module] if path.startswith("tests/"))
