"""Word expansion for the guard, as bash does it (mvdan/sh's expand/).

Brace expansion, parameter expansion (`${x:-y}`, `${x,,}`, `${x#p}`, arrays,
"$@"), command and process substitution (their commands are judged by the
analysis, whose known output becomes the value), arithmetic, word splitting on
IFS and glob marking. A word becomes a short list of alternatives, each a list
of fields; what cannot be known is UNKNOWN. Bounded by MAX_ALTERNATIVES and
MAX_VALUE so the walk stays linear.

Brace expansion and the operators of parameter expansion live in
ralph.rules.guard.expand_rare (RARE_EXPANSION), loaded on first use.
"""
from ralph.rules.guard.state import GLOB, MAX_ALTERNATIVES, MAX_VALUE, UNKNOWN, Scope
from ralph.rules.guard.syntax.parser import ShellSyntaxError, parse

# the methods of ralph.rules.guard.expand_rare.RareExpansion: guard.Analysis loads
# that module when the walk first calls one of them
RARE_EXPANSION = frozenset(("brace_expand", "param_operation"))


class Expander:
    """Expansion methods of the analysis (mixed into guard.Analysis)."""

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


def _split_words(text: str) -> list[str]:
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
