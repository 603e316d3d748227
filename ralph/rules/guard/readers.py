"""Readers for the files task runners run commands from: just enough of YAML
(Taskfile.yml, .pre-commit-config.yaml), INI (tox.ini, setup.cfg), Python
(the functions of a noxfile or tasks.py a run selects), justfiles and CMake
scripts to find the commands in them. Pure, import-light (no yaml, toml or
re): the task-runner models (ralph.rules.guard.programs.runners) use them.

A reader that meets what it does not understand raises Unreadable; the
model then fails closed if the file mentions push/merge.
"""


class Unreadable(ValueError):
    """A file the reader cannot follow (YAML anchors, a broken structure)."""


# ---- YAML: block mappings and sequences, scalars, flow sequences of scalars ----


def yaml_load(text: str) -> object:
    """A small YAML subset: block mappings and sequences, plain and quoted
    scalars, `|`/`>` block scalars, `[a, b]` and `{k: v}` flow collections of
    scalars, comments. Anchors, aliases, tags and multiple documents raise
    Unreadable."""
    lines = []
    for raw in text.replace("\t", "    ").splitlines():
        if raw.strip() in ("---", "...") and not lines:
            continue
        if raw.strip() in ("---", "..."):
            break
        lines.append(raw)
    value, _ = _yaml_block(lines, 0, 0)
    return value


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _content(line: str) -> str:
    """A line without its comment (a `#` after a blank, outside quotes)."""
    out = []
    quote = ""
    for i, c in enumerate(line):
        if quote:
            if c == quote:
                quote = ""
        elif c in "'\"" and (i == 0 or line[i - 1] in " :[{,-"):
            quote = c
        elif c == "#" and (i == 0 or line[i - 1] == " "):
            break
        out.append(c)
    return "".join(out).rstrip()


def _yaml_block(lines: list[str], start: int, indent: int) -> tuple[object, int]:
    i = start
    while i < len(lines) and not _content(lines[i]).strip():
        i += 1
    if i >= len(lines):
        return None, i
    first = _content(lines[i])
    here = _indent(first)
    if here < indent:
        return None, i
    if first.strip().startswith("- ") or first.strip() == "-":
        return _yaml_sequence(lines, i, here)
    return _yaml_mapping(lines, i, here)


def _yaml_sequence(lines: list[str], i: int, indent: int) -> tuple[list, int]:
    items: list = []
    while i < len(lines):
        line = _content(lines[i])
        if not line.strip():
            i += 1
            continue
        if _indent(line) != indent or not (line.strip().startswith("- ") or line.strip() == "-"):
            if _indent(line) > indent:
                raise Unreadable(f"line {i + 1}: unexpected indentation")
            break
        rest = line.strip()[1:].strip()
        if not rest:
            value, i = _yaml_block(lines, i + 1, indent + 1)
            items.append(value)
            continue
        if _is_key(rest):
            # `- key: value` starts a mapping indented at the item's content
            inner = " " * (indent + 2) + rest
            sub = [inner]
            j = i + 1
            while j < len(lines) and (not _content(lines[j]).strip() or _indent(_content(lines[j])) > indent):
                sub.append(lines[j])
                j += 1
            value, _ = _yaml_mapping(sub, 0, indent + 2)
            items.append(value)
            i = j
            continue
        value, i = _yaml_scalar_or_block(lines, i, rest, indent)
        items.append(value)
    return items, i


def _is_key(text: str) -> bool:
    if text[:1] in "'\"":
        quote = text[0]
        end = text.find(quote, 1)
        return end > 0 and text[end + 1:end + 2] == ":"
    colon = text.find(": ")
    if text.endswith(":") and text[:1] not in "[{":
        return True
    return colon > 0 and text[:1] not in "[{"


def _yaml_mapping(lines: list[str], i: int, indent: int) -> tuple[dict, int]:
    mapping: dict = {}
    while i < len(lines):
        line = _content(lines[i])
        if not line.strip():
            i += 1
            continue
        if _indent(line) < indent:
            break
        if _indent(line) > indent:
            raise Unreadable(f"line {i + 1}: unexpected indentation")
        text = line.strip()
        if text.startswith(("&", "*", "!", "<<")) or " &" in text or " *" in text.split("#")[0] and ": *" in text:
            raise Unreadable(f"line {i + 1}: anchors and aliases are not read")
        if not _is_key(text):
            raise Unreadable(f"line {i + 1}: expected `key: value`")
        key, rest = _split_key(text)
        if not rest:
            value, i = _yaml_block(lines, i + 1, indent + 1)
            mapping[key] = value
            continue
        value, i = _yaml_scalar_or_block(lines, i, rest, indent)
        mapping[key] = value
    return mapping, i


def _split_key(text: str) -> tuple[str, str]:
    if text[:1] in "'\"":
        end = text.find(text[0], 1)
        return text[1:end], text[end + 2:].strip()
    key, _, rest = text.partition(":")
    return key.strip(), rest.strip()


def _yaml_scalar_or_block(lines: list[str], i: int, rest: str, indent: int) -> tuple[object, int]:
    if rest.startswith(("&", "*", "!")):
        raise Unreadable(f"line {i + 1}: anchors, aliases and tags are not read")
    if rest[:1] in "|>":
        body = []
        j = i + 1
        block_indent = None
        while j < len(lines):
            raw = lines[j]
            if raw.strip() and _indent(raw) <= indent:
                break
            if raw.strip() and block_indent is None:
                block_indent = _indent(raw)
            body.append(raw[block_indent or 0:] if raw.strip() else "")
            j += 1
        joiner = "\n" if rest[0] == "|" else " "
        return joiner.join(body).strip("\n") + ("\n" if rest[0] == "|" else ""), j
    if rest[:1] in "[{":
        text = rest
        j = i + 1
        while text.count("[") + text.count("{") > text.count("]") + text.count("}") and j < len(lines):
            text += " " + lines[j].strip()
            j += 1
        return _flow(text), j
    return _scalar(rest), i + 1


def _flow(text: str) -> object:
    inner = text.strip()[1:-1]
    parts = _split_commas(inner)
    if text.strip().startswith("["):
        return [_flow(p) if p.strip()[:1] in "[{" else _scalar(p.strip()) for p in parts if p.strip()]
    mapping = {}
    for part in parts:
        if part.strip():
            key, _, value = part.partition(":")
            mapping[_scalar(key.strip())] = _scalar(value.strip())
    return mapping


def _split_commas(text: str) -> list[str]:
    parts, depth, quote, current = [], 0, "", []
    for c in text:
        if quote:
            quote = "" if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c in "[{":
            depth += 1
        elif c in "]}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        current.append(c)
    parts.append("".join(current))
    return parts


def _scalar(text: str) -> object:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        body = text[1:-1]
        return body.replace("''", "'") if text[0] == "'" else body.replace('\\"', '"').replace("\\\\", "\\")
    if text in ("true", "True", "false", "False"):
        return text.lower() == "true"
    if text in ("null", "~", ""):
        return None
    return text


# ---- INI (tox.ini, setup.cfg) ----


def ini_sections(text: str) -> dict[str, dict[str, str]]:
    """section -> key -> value, continuation lines joined with newlines."""
    sections: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    key = ""
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith(("#", ";")):
            continue
        if line[:1] in " \t" and current is not None and key:
            current[key] += "\n" + line.strip()
            continue
        if line.startswith("["):
            name = line.strip()[1:].split("]", 1)[0].strip()
            current = sections.setdefault(name, {})
            key = ""
            continue
        if current is not None and ("=" in line or ":" in line):
            sep = "=" if "=" in line and (":" not in line or line.index("=") < line.index(":")) else ":"
            key, _, value = line.partition(sep)
            key = key.strip()
            current[key] = value.strip()
    return sections


# ---- Python: the functions a run selects ----


def python_selection(text: str, names: set[str] | None, decorated: str = "") -> str:
    """The module-level code of a Python file plus the functions named (all
    when names is None), and the functions those call by name, transitively.
    decorated: only functions with a decorator naming this count as
    selectable (nox sessions, invoke tasks); `name=` in it renames them."""
    blocks = _python_blocks(text)
    functions: dict[str, str] = {}
    module: list[str] = []
    for name, decorator, body in blocks:
        if name is None:
            module.append(body)
        else:
            functions[name] = body
            if decorated and decorated in decorator and "name=" in decorator:
                value = decorator.split("name=", 1)[1].strip()
                if value[:1] in "'\"":
                    functions.setdefault(value[1:].split(value[0], 1)[0], body)
    if names is None:
        return text
    chosen: list[str] = []
    todo = [n for n in names if n in functions]
    seen = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        body = functions[name]
        chosen.append(body)
        todo.extend(other for other in functions if other not in seen and (other + "(") in body.split("\n", 1)[-1])
        for pre in ("pre=", "post="):
            head = body.split("def ", 1)[0]
            if pre in head:
                todo.extend(other for other in functions if other in head.split(pre, 1)[1].split("]", 1)[0])
    return "\n".join(module + chosen)


def _python_blocks(text: str) -> list[tuple[str | None, str, str]]:
    """Top-level blocks: (function name or None, its decorators, text)."""
    blocks: list[tuple[str | None, str, str]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("@") or line.startswith(("def ", "async def ")):
            decorators = []
            while i < len(lines) and lines[i].startswith("@"):
                decorators.append(lines[i])
                i += 1
                while i < len(lines) and lines[i][:1] in (" ", "\t", ")") and not lines[i].startswith(("def ", "async def ")):
                    decorators.append(lines[i])
                    i += 1
            if i >= len(lines) or not lines[i].startswith(("def ", "async def ")):
                blocks.append((None, "", "\n".join(decorators)))
                continue
            header = lines[i]
            name = header.split("def ", 1)[1].split("(", 1)[0].strip()
            body = [header]
            i += 1
            while i < len(lines) and (not lines[i].strip() or lines[i][:1] in (" ", "\t", ")")):
                body.append(lines[i])
                i += 1
            blocks.append((name, "\n".join(decorators), "\n".join(decorators + body)))
            continue
        body = [line]
        i += 1
        while i < len(lines) and (not lines[i].strip() or lines[i][:1] in (" ", "\t", ")", "]", "}")):
            body.append(lines[i])
            i += 1
        blocks.append((None, "", "\n".join(body)))
    return blocks


# ---- justfile ----


class Recipe:
    __slots__ = ("name", "dependencies", "body", "shebang")

    def __init__(self, name: str, dependencies: list[str]) -> None:
        self.name = name
        self.dependencies = dependencies
        self.body: list[str] = []
        self.shebang = ""


def justfile(text: str) -> tuple[list[Recipe], dict[str, str], list[str]]:
    """(recipes in order, variables, commands run while loading: backticks in
    assignments)."""
    recipes: list[Recipe] = []
    variables: dict[str, str] = {}
    loading: list[str] = []
    current: Recipe | None = None
    for raw in text.splitlines():
        if current is not None and raw[:1] in (" ", "\t"):
            line = raw.strip()
            if not current.body and line.startswith("#!"):
                current.shebang = line
            elif line or current.shebang:
                current.body.append(line)
            continue
        current = None
        line = raw.split("#", 1)[0].rstrip() if not raw.lstrip().startswith("#!") else raw
        if not line.strip() or line.startswith(("[", "#")):
            continue
        words = line.split()
        if words[0] in ("set", "alias", "import", "mod", "export") and ":=" not in line.split(":", 1)[0] + ":":
            if words[0] == "export" and ":=" in line:
                line = line[len("export"):].strip()
            else:
                continue
        if ":=" in line and (":" not in line.split(":=", 1)[0]):
            name, _, value = line.partition(":=")
            value = value.strip()
            variables[name.strip()] = value
            start = value.find("`")
            while start >= 0:
                end = value.find("`", start + 1)
                if end < 0:
                    break
                loading.append(value[start + 1:end])
                start = value.find("`", end + 1)
            continue
        if ":" in line:
            head, _, rest = line.partition(":")
            name = head.split()[0].lstrip("@") if head.split() else ""
            dependencies = [w.strip("()") for w in rest.replace("&&", " ").split() if w.strip("()") and not w.startswith(("'", '"'))]
            current = Recipe(name, [d for d in dependencies if d.replace("-", "_").isidentifier()])
            recipes.append(current)
    return recipes, variables, loading


# ---- CMake ----


def cmake_commands(text: str) -> list[tuple[str, list[str]]]:
    """The commands of a CMake script: (name lower case, arguments), quoted
    and bracket arguments unquoted, comments dropped."""
    out: list[tuple[str, list[str]]] = []
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c == "#":
            if text.startswith("#[[", i) or text.startswith("#[=", i):
                close = text.find("]]", i) if text.startswith("#[[", i) else text.find("]=", i)
                i = n if close < 0 else close + 2
            else:
                end = text.find("\n", i)
                i = n if end < 0 else end
            continue
        if c.isalpha() or c == "_":
            j = i
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            k = j
            while k < n and text[k] in " \t":
                k += 1
            if k < n and text[k] == "(":
                name = text[i:j].lower()
                args, i = _cmake_args(text, k + 1)
                out.append((name, args))
                continue
            i = j
            continue
        i += 1
    return out


def _cmake_args(text: str, i: int) -> tuple[list[str], int]:
    args: list[str] = []
    current: list[str] = []
    depth = 1
    n = len(text)
    while i < n:
        c = text[i]
        if c == '"':
            end = i + 1
            while end < n and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            args.append(text[i + 1:end].replace('\\"', '"'))
            i = end + 1
            continue
        if c == "[" and text.startswith("[[", i):
            end = text.find("]]", i + 2)
            args.append(text[i + 2:end if end >= 0 else n])
            i = n if end < 0 else end + 2
            continue
        if c == "#":
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                if current:
                    args.append("".join(current))
                return args, i + 1
        if c in " \t\n\r" and depth == 1:
            if current:
                args.append("".join(current))
                current = []
        else:
            current.append(c)
        i += 1
    if current:
        args.append("".join(current))
    return args, n
