"""Expansions typical commands never reach, loaded on first use: brace
expansion (`{a,b}`, `{1..3}`) and the operators of parameter expansion
(`${x:-y}`, `${x:=y}`, `${x:+y}`, `${!x}`, `${x,,}`, `${x#p}`, `${x/p/r}`,
`${x@P}`, ...).

RareExpansion is mixed into guard.Analysis by guard.analysis_class() the
first time the walk calls one of its methods (guard.Analysis.__getattr__); the
names are listed in expand.RARE_EXPANSION.
"""
from ralph.rules.guard.state import MAX_ALTERNATIVES, UNKNOWN, Scope


class RareExpansion:
    """Expansion methods of the analysis that typical commands never call."""

    __slots__ = ()

    def brace_expand(self, word: list) -> list[list]:
        """Brace expansion over a word's unquoted literal text (bash does it
        first), for a word with braces (expand._has_braces)."""
        if sum(p[1].count("{") for p in word if p[0] == "s" and not p[2]) > 32:
            return [[("s", UNKNOWN, True)]]  # too many braces to expand cheaply
        # flatten to atoms: (char, special) for unquoted literal chars, (part, False) otherwise
        atoms: list[tuple] = []
        for p in word:
            if p[0] == "s" and not p[2]:
                atoms.extend((c, True) for c in p[1])
            else:
                atoms.append((p, False))
        results: list[list[tuple]] = []
        _brace_atoms(atoms, results)
        words = []
        for seq in results[:MAX_ALTERNATIVES * 4]:
            parts: list = []
            buf: list[str] = []
            for item, special in seq:
                if special:
                    buf.append(item)
                else:
                    if buf:
                        parts.append(("s", "".join(buf), False))
                        buf = []
                    parts.append(item)
            if buf:
                parts.append(("s", "".join(buf), False))
            if parts:
                words.append(parts)
        return words or [[("s", "", True)]]

    def param_operation(self, name: str, base: str, values: list | None, part: tuple, scope: Scope, where: str) -> list:
        """The values of `${..}` with an operator (`${x:-y}`, `${!x}`, `${x,,}`,
        `${x#p}`, ...), given the parameter's own values."""
        _, _, quoted, op, arg = part
        if op == "!":
            if values is None or len(values) != 1 or not isinstance(values[0], str):
                return [UNKNOWN]
            return self.param_values(("v", values[0], quoted, "", None), scope, where)
        if op == "#":
            return [UNKNOWN] if values is None else [str(len(v)) if isinstance(v, str) else str(len(v)) for v in values]
        flat: list[str] | None = None if values is None else [v if isinstance(v, str) else " ".join(v) for v in values]
        if op in (":-", "-", ":=", "="):
            defaults = self.expand_value(arg or [], scope, where) or [""]
            if op in (":=", "=") and base.isidentifier():
                if flat is None:
                    scope.vars[base] = None
                elif not any(flat) and op == ":=":
                    scope.vars[base] = defaults
            if flat is None:
                return [UNKNOWN] + defaults
            if op.startswith(":"):
                return [v for v in flat if v] + (defaults if any(not v for v in flat) else [])
            return flat
        if op in (":+", "+"):
            alternates = self.expand_value(arg or [], scope, where) or [""]
            if flat is None:
                return [""] + alternates
            return (alternates if any(flat) else []) + ([""] if not all(flat) else [])
        if op in (":?", "?"):
            self.expand_value(arg or [], scope, where)
            return [UNKNOWN] if flat is None else flat
        if op in ("^^", ",,", "^", ","):
            if arg:
                return [UNKNOWN]
            if flat is None:
                return [UNKNOWN]
            if op == "^^":
                return [v.upper() for v in flat]
            if op == ",,":
                return [v.lower() for v in flat]
            if op == "^":
                return [v[:1].upper() + v[1:] for v in flat]
            return [v[:1].lower() + v[1:] for v in flat]
        if op == "@" and arg and all(p[0] == "s" for p in arg) and "".join(p[1] for p in arg) == "P":
            # ${x@P}: x expanded as a prompt string, command substitutions included
            for value in flat or []:
                self.prompt_expand(value, scope, f"{where} > ${{{name}@P}}")
            return [UNKNOWN]
        # pattern removal, substitution, substrings, transforms: run the nested
        # expansions (they may hold commands) but treat the result as unknown
        if arg:
            self.expand_value(arg, scope, where)
        if flat is not None and arg is not None and op in ("#", "##", "%", "%%", "/", "//", "/#", "/%"):
            return [_pattern_op(v, op, arg) for v in flat]
        return [UNKNOWN]


def _brace_atoms(atoms: list[tuple], out: list) -> None:
    if len(out) > MAX_ALTERNATIVES * 4:
        return
    n = len(atoms)
    for start in range(n):
        if atoms[start] != ("{", True):
            continue
        depth = 0
        commas = []
        end = -1
        for j in range(start, n):
            a = atoms[j]
            if a == ("{", True):
                depth += 1
            elif a == ("}", True):
                depth -= 1
                if depth == 0:
                    end = j
                    break
            elif a == (",", True) and depth == 1:
                commas.append(j)
        if end < 0:
            break
        prefix, suffix = atoms[:start], atoms[end + 1:]
        if commas:
            bounds = [start] + commas + [end]
            for k in range(len(bounds) - 1):
                _brace_atoms(prefix + atoms[bounds[k] + 1:bounds[k + 1]] + suffix, out)
            return
        inner = "".join(a[0] for a in atoms[start + 1:end] if a[1])
        if len(inner) == end - start - 1 and ".." in inner:
            seq = _brace_sequence(inner)
            if seq is not None:
                for item in seq:
                    _brace_atoms(prefix + [(c, True) for c in item] + suffix, out)
                return
    out.append(atoms)


def _brace_sequence(inner: str) -> list[str] | None:
    pieces = inner.split("..")
    if len(pieces) not in (2, 3):
        return None
    a, b = pieces[0], pieces[1]
    try:
        if len(a) == 1 and len(b) == 1 and a.isalpha() and b.isalpha():
            lo, hi = ord(a), ord(b)
            step = 1 if lo <= hi else -1
            items = [chr(c) for c in range(lo, hi + step, step)]
        else:
            lo, hi = int(a), int(b)
            step = 1 if lo <= hi else -1
            if abs(hi - lo) > 64:
                return None
            items = [str(c) for c in range(lo, hi + step, step)]
    except ValueError:
        return None
    return items


def _pattern_op(value: str, op: str, arg: list) -> str:
    """${x#lit}, ${x/lit/rep} with literal patterns; anything else is unknown."""
    if any(p[0] != "s" for p in arg):
        return UNKNOWN
    text = "".join(p[1] for p in arg)
    if op.startswith("/"):
        pattern, _, replacement = text.partition("/")
        if any(c in pattern for c in "*?[") or not pattern:
            return UNKNOWN
        if op == "//":
            return value.replace(pattern, replacement)
        if op == "/#":
            return replacement + value[len(pattern):] if value.startswith(pattern) else value
        if op == "/%":
            return value[: -len(pattern)] + replacement if value.endswith(pattern) else value
        return value.replace(pattern, replacement, 1)
    if any(c in text for c in "*?["):
        return UNKNOWN
    if op.startswith("#"):
        return value[len(text):] if value.startswith(text) else value
    return value[: -len(text)] if text and value.endswith(text) else value
