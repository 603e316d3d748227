"""A bash parser for the push/merge guard: source text -> a small syntax tree.

It follows bash's own lexing (quotes, escapes, `$'..'`, `$(..)`, backticks,
`${..}`, `$((..))`, process substitution, heredocs, line continuations,
comments, reserved words in command position) closely enough that what it
calls a command word is what bash would run. It does not expand anything:
ralph.rules.guard.judge walks the tree and expands words itself.

The grammar typical commands never reach (compound commands, functions,
arithmetic, `${..}`, backticks, process substitution, arrays) lives in
ralph.rules.guard.shell_rare, loaded on first use (Parser.__getattr__).

Linear in the input: every character is consumed once, except backtick bodies
(re-read once per backtick level). Nesting deeper than MAX_DEPTH raises TooDeep
rather than exhausting Python's stack; a budget callback lets the caller stop
a parse that runs past its deadline.

Tree shapes (tuples, for speed):
  ("seq", [node, ...])                     `a; b`, `a & b`, newlines
  ("and", [node, ...], [op, ...])          `a && b || c`: all but the first are conditional
  ("pipe", [node, ...], [op, ...])         ops: the operators between the nodes (`|` or `|&`)
  ("cmd", assigns, words, redirs, text)    a simple command; text is its source (trimmed)
  ("sub", body, redirs) / ("grp", body, redirs)    `( .. )` / `{ ..; }`
  ("if", [node, ...], redirs)              conditions and branches in source order
  ("for", name, words | None, body, redirs)
  ("while", cond, body, redirs)           `until`: cond wrapped in a grp; `! x` is ("grp", x, [])
  ("case", word, [(patterns, body), ...], redirs)
  ("func", name, body)
  ("arith", parts)                         `(( .. ))`
  ("test", words)                          `[[ .. ]]`
A word is a list of parts:
  ("s", text, quoted)                      literal text; quoted means no splitting/globbing
  ("v", name, quoted, op, arg)             `$x`, `${x:-arg}`; op "" for plain, "#" length, "!" indirect
  ("c", tree, quoted)                      `$(..)` or backticks
  ("p", tree)                              `<(..)` or `>(..)`
  ("a", parts)                             `$((..))`
An assignment is ("=", name, word) or ("=()", name, [word, ...]).
A redirect is (op, target) where target is a word, or a Heredoc for `<<`.
"""
MAX_DEPTH = 40

META = " \t\n;&|()<>"
TEST_STOPS = " \t\n"
RESERVED_STARTS = frozenset(("if", "while", "until", "for", "select", "case", "function", "{", "[[", "!"))
OPERATORS = (";;&", ";;", ";&", ";", "&&", "&>>", "&>", "&", "||", "|&", "|", "(", ")",
             "<<<", "<<-", "<<", "<&", "<>", "<", ">>", ">&", ">|", ">")
REDIRECTS = frozenset(("&>>", "&>", "<<<", "<<-", "<<", "<&", "<>", "<", ">>", ">&", ">|", ">"))
NAME_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789")
SPECIAL_PARAMS = frozenset("@*#?$!-0123456789")
C_ESCAPES = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r",
             "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}
OCTAL = frozenset("01234567")
HEX = frozenset("0123456789abcdefABCDEF")


def _flush(parts: list, buf: list[str], quoted: bool) -> None:
    """Close the literal text gathered so far as one part."""
    if buf:
        parts.append(("s", "".join(buf), quoted))
        buf.clear()


class ShellSyntaxError(Exception):
    """The text is not valid bash (or uses a form this parser does not know)."""


class TooDeep(Exception):
    """Nesting beyond MAX_DEPTH."""


class Heredoc:
    __slots__ = ("delim", "quoted", "strip_tabs", "body")

    def __init__(self, delim: str, quoted: bool, strip_tabs: bool) -> None:
        self.delim = delim
        self.quoted = quoted
        self.strip_tabs = strip_tabs
        self.body: list | str = ""  # parts when unquoted, text when quoted


def parse(text: str, depth: int = 0, budget: object = None) -> tuple:
    """The syntax tree of a whole script. Raises ShellSyntaxError, TooDeep."""
    return Parser(text, depth, budget).parse_script()


def word_literal(word: list) -> str | None:
    """The text of a word made only of unquoted literal parts, else None."""
    if len(word) == 1 and word[0][0] == "s" and not word[0][2]:
        return word[0][1]
    return None


def decode_ansi_c(body: str) -> str:
    """The value of `$'...'`."""
    out = []
    i = 0
    n = len(body)
    while i < n:
        c = body[i]
        if c != "\\" or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        e = body[i + 1]
        i += 2
        if e in C_ESCAPES:
            out.append(C_ESCAPES[e])
        elif e in OCTAL:
            j = i
            while j < n and j < i + 2 and body[j] in OCTAL:
                j += 1
            out.append(chr(int(e + body[i:j], 8) & 0xFF))
            i = j
        elif e in "xuU":
            limit = {"x": 2, "u": 4, "U": 8}[e]
            j = i
            while j < n and j - i < limit and body[j] in HEX:
                j += 1
            if j == i:
                out.append("\\" + e)
            else:
                try:
                    out.append(chr(int(body[i:j], 16)))
                except (ValueError, OverflowError):
                    out.append("\x00")
                i = j
        elif e == "c" and i < n:
            out.append(chr(ord(body[i]) & 0x1F))
            i += 1
        else:
            out.append("\\" + e)
    return "".join(out)


class Parser:
    """The parser of simple commands, pipelines and lists; the rest of the
    grammar (ralph.rules.guard.shell_rare) is loaded when a command first needs it:
    see __getattr__."""

    __slots__ = ("src", "pos", "n", "depth", "pending", "peeked", "budget", "tok_start")

    def __init__(self, src: str, depth: int = 0, budget: object = None) -> None:
        if depth > MAX_DEPTH:
            raise TooDeep(f"nesting deeper than {MAX_DEPTH}")
        self.src = src
        self.pos = 0
        self.n = len(src)
        self.depth = depth
        self.pending: list[Heredoc] = []
        self.peeked: tuple | None = None
        self.budget = budget
        self.tok_start = 0

    def __getattr__(self, name: str) -> object:
        # Only reached for a name this class lacks: a method of the rare
        # syntax. The parser becomes a FullParser (same slots, every method),
        # so the parse goes on where it was.
        if type(self) is Parser:
            self.__class__ = full_parser()
            return getattr(self, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    # ---- tokens ----

    def skip_blanks(self) -> None:
        src, n = self.src, self.n
        pos = self.pos
        while pos < n:
            c = src[pos]
            if c == " " or c == "\t":
                pos += 1
            elif c == "\\" and src.startswith("\n", pos + 1):
                pos += 2
            elif c == "#":
                end = src.find("\n", pos)
                pos = n if end < 0 else end
            else:
                break
        self.pos = pos

    def peek(self, test_mode: bool = False) -> tuple:
        if self.peeked is None:
            self.peeked = self.lex(test_mode)
        return self.peeked

    def next(self, test_mode: bool = False) -> tuple:
        tok = self.peek(test_mode)
        self.peeked = None
        return tok

    def lex(self, test_mode: bool = False) -> tuple:
        self.skip_blanks()
        if self.budget is not None:
            self.budget.check()
        src, pos = self.src, self.pos
        self.tok_start = pos
        if pos >= self.n:
            return ("eof",)
        c = src[pos]
        if c == "\n":
            self.pos = pos + 1
            self.read_heredocs()
            return ("op", "\n")
        if test_mode:
            if src.startswith("]]", pos) and (pos + 2 >= self.n or src[pos + 2] in META):
                self.pos = pos + 2
                return ("w", [("s", "]]", False)])
            if c not in ";":
                return ("w", self.read_word(TEST_STOPS + ";"))
        if c.isdigit():
            j = pos
            while j < self.n and src[j].isdigit():
                j += 1
            if j < self.n and src[j] in "<>" and not src.startswith("(", j + 1):
                self.pos = j
                tok = self.lex_operator()
                return ("r", tok[1], src[pos:j])
        if c in "<>" and src.startswith("(", pos + 1):
            return ("w", self.read_word(META))
        if c in ";&|()<>":
            return self.lex_operator()
        return ("w", self.read_word(META))

    def lex_operator(self) -> tuple:
        src, pos = self.src, self.pos
        for op in OPERATORS:
            if src.startswith(op, pos):
                self.pos = pos + len(op)
                if op in REDIRECTS:
                    return ("r", op, "")
                return ("op", op)
        raise ShellSyntaxError(f"unexpected {src[pos]!r}")  # pragma: no cover - OPERATORS covers every metachar

    def read_heredocs(self) -> None:
        pending, self.pending = self.pending, []
        src, n = self.src, self.n
        for doc in pending:
            lines = []
            pos = self.pos
            while pos < n:
                end = src.find("\n", pos)
                line = src[pos:] if end < 0 else src[pos:end]
                pos = n if end < 0 else end + 1
                check = line.lstrip("\t") if doc.strip_tabs else line
                if check == doc.delim:
                    break
                lines.append(check)
            self.pos = pos
            body = "".join(line + "\n" for line in lines)
            if doc.quoted:
                doc.body = body
            else:
                doc.body = Parser(body, self.depth + 1, self.budget).read_dq(None, heredoc=True)

    # ---- words ----

    def read_word(self, stops: str) -> list:
        src, n = self.src, self.n
        parts: list = []
        buf: list[str] = []
        start = self.pos
        while self.pos < n:
            pos = self.pos
            c = src[pos]
            if c in stops:
                if c in "<>" and src.startswith("(", pos + 1) and stops is META:
                    _flush(parts, buf, False)
                    parts.append(self.read_procsub())
                    continue
                break
            if c == "\\":
                if pos + 1 >= n:
                    buf.append("\\")
                    self.pos = pos + 1
                elif src[pos + 1] == "\n":
                    self.pos = pos + 2
                else:
                    _flush(parts, buf, False)
                    parts.append(("s", src[pos + 1], True))
                    self.pos = pos + 2
            elif c == "'":
                end = src.find("'", pos + 1)
                if end < 0:
                    raise ShellSyntaxError("unterminated single quote")
                _flush(parts, buf, False)
                parts.append(("s", src[pos + 1:end], True))
                self.pos = end + 1
            elif c == '"':
                _flush(parts, buf, False)
                self.pos = pos + 1
                inner = self.read_dq('"')
                parts.extend(inner if inner else [("s", "", True)])
            elif c == "$":
                _flush(parts, buf, False)
                parts.extend(self.read_dollar(False))
            elif c == "`":
                _flush(parts, buf, False)
                parts.append(self.read_backtick(False))
            else:
                # a run of plain characters in one step
                j = pos + 1
                while j < n and src[j] not in stops and src[j] not in "\\'\"$`":
                    j += 1
                buf.append(src[pos:j])
                self.pos = j
        _flush(parts, buf, False)
        if self.pos == start:
            raise ShellSyntaxError(f"unexpected {src[start:start + 1]!r}")
        return parts

    def read_dq(self, term: str | None, heredoc: bool = False) -> list:
        """Double-quoted text (or an unquoted heredoc body when term is None)."""
        src, n = self.src, self.n
        parts: list = []
        buf: list[str] = []
        escapable = "$`\\\n" if heredoc else "$`\"\\\n"
        while True:
            pos = self.pos
            if pos >= n:
                if term is not None:
                    raise ShellSyntaxError("unterminated double quote")
                break
            c = src[pos]
            if c == term:
                self.pos = pos + 1
                break
            if c == "\\" and pos + 1 < n and src[pos + 1] in escapable:
                if src[pos + 1] != "\n":
                    buf.append(src[pos + 1])
                self.pos = pos + 2
            elif c == "$":
                _flush(parts, buf, True)
                parts.extend(self.read_dollar(True))
            elif c == "`":
                _flush(parts, buf, True)
                parts.append(self.read_backtick(True, heredoc))
            else:
                j = pos + 1
                while j < n and src[j] not in "\\$`\"":
                    j += 1
                buf.append(src[pos:j])
                self.pos = j
        _flush(parts, buf, True)
        return parts

    def read_dollar(self, quoted: bool) -> list:
        src, pos = self.src, self.pos
        nxt = src[pos + 1:pos + 2]
        if nxt == "'" and not quoted:
            j = pos + 2
            while j < self.n and src[j] != "'":
                j += 2 if src[j] == "\\" else 1
            if j >= self.n:
                raise ShellSyntaxError("unterminated $'")
            self.pos = j + 1
            return [("s", decode_ansi_c(src[pos + 2:j]), True)]
        if nxt == '"' and not quoted:
            self.pos = pos + 2
            return self.read_dq('"') or [("s", "", True)]
        if nxt == "(":
            if src.startswith("((", pos + 1):
                arith = self.try_arith(pos)
                if arith is not None:
                    return [arith]
            self.pos = pos + 2
            tree = self.nested_list(")")
            return [("c", tree, quoted)]
        if nxt == "{":
            return [self.read_braced(quoted)]
        if nxt and nxt in NAME_START:
            j = pos + 2
            while j < self.n and src[j] in NAME_CHARS:
                j += 1
            self.pos = j
            return [("v", src[pos + 1:j], quoted, "", None)]
        if nxt and nxt in SPECIAL_PARAMS:
            self.pos = pos + 2
            return [("v", nxt, quoted, "", None)]
        self.pos = pos + 1
        return [("s", "$", quoted)]

    def nested_list(self, close: str) -> tuple:
        """Parse a list up to the matching `close` operator (for `$(`, `<(`)."""
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise TooDeep(f"nesting deeper than {MAX_DEPTH}")
        saved = self.peeked
        self.peeked = None
        tree = self.parse_list(stop_ops=(close,))
        tok = self.next()
        if tok != ("op", close):
            raise ShellSyntaxError(f"missing {close!r}")
        self.peeked = saved
        self.depth -= 1
        return tree

    # ---- grammar ----

    def parse_script(self) -> tuple:
        tree = self.parse_list()
        tok = self.next()
        if tok[0] != "eof":
            raise ShellSyntaxError(f"unexpected {tok[1]!r}")
        if self.pending:
            self.read_heredocs()
        return tree

    def at_stop(self, tok: tuple, stop_words: tuple, stop_ops: tuple) -> bool:
        if tok[0] == "eof":
            return True
        if tok[0] == "op":
            return tok[1] in stop_ops or tok[1] in (")", ";;", ";&", ";;&")
        if tok[0] == "w" and stop_words:
            literal = word_literal(tok[1])
            return literal is not None and literal in stop_words
        return False

    def parse_list(self, stop_words: tuple = (), stop_ops: tuple = ()) -> tuple:
        items = []
        while True:
            tok = self.peek()
            while tok[0] == "op" and tok[1] in ("\n", ";", "&"):
                self.next()
                tok = self.peek()
            if self.at_stop(tok, stop_words, stop_ops):
                break
            items.append(self.parse_and_or())
            tok = self.peek()
            if tok[0] == "op" and tok[1] in ("\n", ";", "&"):
                continue
            if not self.at_stop(tok, stop_words, stop_ops):
                raise ShellSyntaxError(f"unexpected {tok[1] if len(tok) > 1 else tok[0]!r}")
        return ("seq", items)

    def skip_newlines(self) -> None:
        while self.peek() == ("op", "\n"):
            self.next()

    def parse_joined(self, parse_item: object, operators: tuple, tag: str) -> tuple:
        """item (op item)*; a newline may follow each operator."""
        items = [parse_item()]
        ops = []
        while True:
            tok = self.peek()
            if tok[0] != "op" or tok[1] not in operators:
                break
            self.next()
            ops.append(tok[1])
            self.skip_newlines()
            items.append(parse_item())
        return items[0] if len(items) == 1 else (tag, items, ops)

    def parse_and_or(self) -> tuple:
        return self.parse_joined(self.parse_pipeline, ("&&", "||"), "and")

    def parse_pipeline(self) -> tuple:
        tok = self.peek()
        negated = False
        while tok[0] == "w" and word_literal(tok[1]) == "!":
            self.next()
            negated = True
            tok = self.peek()
        node = self.parse_joined(self.parse_command, ("|", "|&"), "pipe")
        # `! cmd`: a group, so nobody reads a certain exit status off `cmd`
        return ("grp", node, []) if negated else node

    def redirect_target(self, op: str) -> tuple:
        tok = self.next()
        if tok[0] != "w":
            raise ShellSyntaxError(f"missing target after {op!r}")
        word = tok[1]
        if op in ("<<", "<<-"):
            quoted = any(p[0] != "s" or p[2] for p in word)
            delim = "".join(p[1] if p[0] == "s" else "$" + str(p[1]) for p in word)
            doc = Heredoc(delim, quoted, op == "<<-")
            self.pending.append(doc)
            return (op, doc)
        return (op, word)

    def parse_command(self) -> tuple:
        if self.budget is not None:
            self.budget.check()
        tok = self.peek()
        if tok[0] == "op" and tok[1] == "(":
            return self.parse_subshell()
        if tok[0] == "w":
            literal = word_literal(tok[1])
            if literal in RESERVED_STARTS:
                return self.parse_compound(literal)
        return self.parse_simple()

    def parse_simple(self) -> tuple:
        assigns: list = []
        words: list = []
        redirs: list = []
        start = self.tok_start if self.peeked is not None else self.pos
        while True:
            tok = self.peek()
            if tok[0] == "r":
                self.next()
                redirs.append(self.redirect_target(tok[1]))
                continue
            if tok[0] != "w":
                break
            self.next()
            word = tok[1]
            if not words:
                assignment = self.as_assignment(word)
                if assignment is not None:
                    assigns.append(assignment)
                    continue
                if self.peek() == ("op", "(") and not assigns:
                    return self.parse_function_definition(word)
            elif (len(words) == 1 or assigns) and words and word_literal(words[0]) in DECLARATION_BUILTINS:
                assignment = self.as_assignment(word)
                if assignment is not None and assignment[0] == "=()":
                    words.append([("s", assignment[1] + "=", False)] + [p for w in assignment[2] for p in w + [("s", " ", True)]])
                    continue
            words.append(word)
        if not words and not assigns and not redirs:
            tok = self.peek()
            raise ShellSyntaxError(f"unexpected {tok[1] if len(tok) > 1 else 'end of input'!r}")
        end = self.tok_start if self.peeked is not None else self.pos
        text = self.src[start:end].strip()
        if len(text) > 300:
            text = text[:297] + "..."
        return ("cmd", assigns, words, redirs, text)

    def as_assignment(self, word: list) -> tuple | None:
        first = word[0]
        if first[0] != "s" or first[2]:
            return None
        text = first[1]
        eq = text.find("=")
        if eq <= 0:
            return None
        name = text[:eq]
        if name.endswith("+"):
            name = name[:-1]
        bracket = name.find("[")
        base = name[:bracket] if bracket > 0 and name.endswith("]") else name
        if not base or base[0] not in NAME_START or any(ch not in NAME_CHARS for ch in base):
            return None
        rest = text[eq + 1:]
        value = ([("s", rest, False)] if rest else []) + list(word[1:])
        if not value and len(word) == 1 and self.src.startswith("(", self.pos) and self.peeked is None:
            return self.read_array_assignment(base)
        return ("=", base, value)


DECLARATION_BUILTINS = frozenset(("declare", "typeset", "local", "export", "readonly"))


_FULL: list[type] = []


def full_parser() -> type:
    """Parser with the rare syntax (ralph.rules.guard.shell_rare) mixed in, built on first use."""
    if not _FULL:
        from ralph.rules.guard.shell_rare import RareSyntax

        class FullParser(Parser, RareSyntax):
            __slots__ = ()

        _FULL.append(FullParser)
    return _FULL[0]
