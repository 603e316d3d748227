"""Word expansion for the guard, as bash does it (mvdan/sh's expand/).

Brace expansion, parameter expansion (`${x:-y}`, `${x,,}`, `${x#p}`,
`${!x}`, `${x@P}`, arrays, "$@"), command and process substitution (their
commands are judged by the analysis, whose known output becomes the value),
arithmetic, word splitting on IFS and glob marking. A word becomes a short
list of alternatives, each a list of fields; what cannot be known is
UNKNOWN. Bounded by MAX_ALTERNATIVES and MAX_VALUE so the walk stays linear.

Expander is the base of the walk (ralph.rules.guard.interp.Analysis): a
substitution's commands are run by the walk (run), a prompt string by
prompt_expand.
"""
from ralph.rules.guard.state import GLOB, MAX_ALTERNATIVES, MAX_VALUE, UNKNOWN, Scope
from ralph.rules.guard.syntax.parser import ShellSyntaxError, parse


class Expander:
    """Expansion methods of the analysis (the base of interp.Analysis)."""

    __slots__ = ()

    def expand_words(self, words: list, scope: Scope, where: str) -> list[list[str]]:
        """All argv alternatives of a command's words (at most MAX_ALTERNATIVES)."""
        argvs: list[list[str]] = [[]]
        for word in words:
            alternatives = self.expand(word, scope, where)
            if len(argvs) * len(alternatives) > MAX_ALTERNATIVES:
                alternatives = [[UNKNOWN]]
            argvs = [argv + fields for argv in argvs for fields in alternatives]
        return argvs

    def expand(self, word: list, scope: Scope, where: str) -> list[list[str]]:
        """A word's alternatives, each a list of fields after splitting and brace expansion."""
        if len(word) == 1 and word[0][0] == "s":
            kind, text, quoted = word[0]
            if quoted:
                return [[text]]
            if "{" not in text and "~" not in text[:1] and not _has_glob(text):
                return [[text]]
        # brace expansion makes more words; each word may have alternatives
        results: list[list[str]] = [[]]
        for variant in self.brace_expand(word) if _has_braces(word) else (word,):
            alternatives = self.expand_parts(variant, scope, where, in_quotes=False)
            if len(results) * len(alternatives) > MAX_ALTERNATIVES:
                return [[UNKNOWN]]
            results = [done + fields for done in results for fields in alternatives]
        return results

    def brace_expand(self, word: list) -> list[list]:
        """Brace expansion over a word's unquoted literal text (bash does it
        first), for a word with braces (_has_braces)."""
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

    def expand_joined(self, parts: list, scope: Scope, where: str) -> str | None:
        """A quoted context's single string (heredoc body, here-string), None when unknown."""
        alternatives = self.expand_parts(parts, scope, where, in_quotes=True)
        if len(alternatives) != 1:
            return None
        value = " ".join(alternatives[0])
        return None if UNKNOWN in value else value

    def expand_value(self, parts: list, scope: Scope, where: str) -> list[str] | None:
        """An assignment's possible values (no splitting, no globbing)."""
        alternatives = self.expand_parts(parts, scope, where, in_quotes=True)
        values = [" ".join(fields) for fields in alternatives]
        return values[:MAX_ALTERNATIVES] if values else [""]

    def expand_parts(self, parts: list, scope: Scope, where: str, in_quotes: bool) -> list[list[str]]:
        # Each alternative is (fields, current, current_started).
        alternatives: list[tuple[list[str], str, bool]] = [([], "", False)]
        ifs = scope.vars.get("IFS")
        separators = " \t\n" if not ifs or ifs[0] is None else ifs[0]
        for part in parts:
            self.budget.check()
            kind = part[0]
            pieces: list[tuple[list[str] | str, bool]]  # (value or list of fields, quoted)
            if kind == "s":
                text = part[1]
                if not part[2] and not in_quotes:
                    text = _mark_globs(text)
                pieces = [(text, True)]
            elif kind == "v":
                pieces = [(v, part[2] or in_quotes) for v in self.param_values(part, scope, where)]
            elif kind == "c":
                output = self.run(part[1], scope.fork(), "", False, f"{where} > $(…)")
                value = UNKNOWN if output is None else output.rstrip("\n")
                if len(value) > MAX_VALUE:
                    value = UNKNOWN
                pieces = [(value, part[2] or in_quotes)]
            elif kind == "p":
                key = "\x03" + str(id(part))
                scope.files[key] = self.run(part[1], scope.fork(), None, False, f"{where} > <(…)")
                pieces = [(key, True)]
            elif kind == "a":
                self.expand_parts(part[1], scope, where, in_quotes=True)
                pieces = [(UNKNOWN, True)]
            else:  # pragma: no cover
                pieces = [(UNKNOWN, True)]
            new: list[tuple[list[str], str, bool]] = []
            for fields, current, started in alternatives:
                for value, quoted in pieces:
                    if isinstance(value, list):
                        # "$@": each element its own field
                        if not value:
                            new.append((fields, current, started))
                            continue
                        if quoted:
                            first = current + value[0]
                            middle = value[1:-1]
                            if len(value) == 1:
                                new.append((fields, first, True))
                            else:
                                new.append((fields + [first] + middle, value[-1], True))
                        else:
                            split = [w for v in value for w in _split_fields(v, separators)]
                            if not split:
                                new.append((fields, current, started))
                            elif len(split) == 1:
                                new.append((fields, current + split[0], True))
                            else:
                                new.append((fields + [current + split[0]] + split[1:-1], split[-1], True))
                        continue
                    if quoted or in_quotes:
                        new.append((fields, current + value, True))
                        continue
                    # unquoted expansion: split on IFS
                    if not value:
                        new.append((fields, current, started))
                        continue
                    split = _split_fields(value, separators)
                    lead = value[0] in separators
                    trail = value[-1] in separators
                    if not split:
                        new.append((fields + ([current] if started else []), "", False))
                        continue
                    out_fields = list(fields)
                    cur = current
                    if lead and started:
                        out_fields.append(cur)
                        cur = ""
                    cur += split[0]
                    for w in split[1:]:
                        out_fields.append(cur)
                        cur = w
                    if trail:
                        out_fields.append(cur)
                        new.append((out_fields, "", False))
                    else:
                        new.append((out_fields, cur, True))
            alternatives = new[:MAX_ALTERNATIVES] if len(new) <= MAX_ALTERNATIVES else [([UNKNOWN], "", False)]
            if any(len(current) > MAX_VALUE or len(fields) > 4096 for fields, current, _ in alternatives):
                # `x=$x$x` repeated: stop growing, the value is unknown
                alternatives = [(fields[:4096], UNKNOWN if len(current) > MAX_VALUE else current, True)
                                for fields, current, _ in alternatives]
        results = []
        for fields, current, started in alternatives:
            if started or (in_quotes and not fields):
                fields = fields + [current]
            results.append(fields)
        if in_quotes:
            return results
        return results

    def param_values(self, part: tuple, scope: Scope, where: str) -> list:
        """Possible values of a parameter expansion: strings, or lists of fields for "$@"."""
        _, name, quoted, op, arg = part
        for _ in range(8):  # a nameref (declare -n) reads the variable it stands for
            if name.split("[", 1)[0] not in scope.refs:
                break
            name = scope.refs[name.split("[", 1)[0]] + name[len(name.split("[", 1)[0]):]
        base = name.split("[", 1)[0]
        subscript = name[len(base) + 1:-1] if "[" in name else None
        if op == "!names":
            return [UNKNOWN]
        values: list | None
        if base in ("@", "*") or (subscript in ("@", "*") and base in scope.arrays):
            items = scope.positional if base in ("@", "*") else scope.arrays.get(base)
            if items is None:
                values = [[UNKNOWN]]
            elif (base == "*" or subscript == "*") and quoted:
                values = [" ".join(items)]
            else:
                values = [list(items)]
        elif base.isdigit():
            index = int(base)
            if index == 0:
                values = scope.vars.get("0", ["bash"])
            elif scope.positional is None:
                values = None
            else:
                values = [scope.positional[index - 1] if index - 1 < len(scope.positional) else ""]
        elif base == "#":
            values = [str(len(scope.positional))] if scope.positional is not None else None
        elif base in ("?", "$", "!", "-"):
            values = ["0"]
        elif subscript is not None and base in scope.arrays:
            items = scope.arrays[base]
            values = [items[int(subscript)]] if subscript.isdigit() and int(subscript) < len(items) else None
        elif base in scope.vars:
            values = scope.vars[base]
        else:
            values = None  # set outside this command
        if not op:
            return [UNKNOWN] if values is None else values
        return self.param_operation(name, base, values, part, scope, where)

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


def _split_fields(value: str, separators: str) -> list[str]:
    if separators == " \t\n":
        return value.split()
    out = []
    current = []
    for ch in value:
        if ch in separators:
            if current:
                out.append("".join(current))
                current = []
        else:
            current.append(ch)
    if current:
        out.append("".join(current))
    return out


def _has_glob(text: str) -> bool:
    if "*" in text or "?" in text:
        return True
    bracket = text.find("[")
    return bracket >= 0 and "]" in text[bracket + 1:]


def _mark_globs(text: str) -> str:
    if not _has_glob(text):
        return text
    return "".join(GLOB + c if c in "*?[" else c for c in text)


def _has_braces(word: list) -> bool:
    """Could brace expansion make more than one word of this one?"""
    return any(p[0] == "s" and not p[2] and "{" in p[1] and ("," in p[1] or ".." in p[1]) for p in word)


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


def split_words(text: str) -> list[str]:
    """Shell-like word splitting of a static string (quotes, backslashes)."""
    tree = parse(text, 1)
    words: list[str] = []
    for node in tree[1]:
        if node[0] != "cmd":
            raise ShellSyntaxError("not a simple word list")
        for assign in node[1]:
            words.append(assign[1] + "=" + "".join(p[1] if p[0] == "s" else UNKNOWN for p in assign[2]) if assign[0] == "=" else UNKNOWN)
        for word in node[2]:
            words.append("".join(p[1] if p[0] == "s" else UNKNOWN for p in word))
    return words
