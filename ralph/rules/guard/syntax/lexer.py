"""The lexer of the guard's bash parser: tokens and words.

It follows bash's own lexing (quotes, escapes, `$'..'`, `$(..)`, backticks,
`${..}`, `$((..))`, process substitution, heredocs, line continuations,
comments) closely enough that what it calls a word is what bash would see.
It does not expand anything: ralph.rules.guard.interp walks the tree and
expands words itself (ralph.rules.guard.expand).

Lexer is the base of ralph.rules.guard.syntax.parser.Parser, the grammar:
a word that holds a command list (`$(..)`, `<(..)`, backticks) has it read
by the grammar (nested_list, parse_script). The shapes of words and trees
are described there.

Linear in the input: every character is consumed once, except backtick bodies
(re-read once per backtick level). Nesting deeper than MAX_DEPTH raises TooDeep
rather than exhausting Python's stack; a budget callback lets the caller stop
a parse that runs past its deadline.
"""
MAX_DEPTH = 40

META = " \t\n;&|()<>"
TEST_STOPS = " \t\n"
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
# the operators of `${name<op>arg}`, each before any that is its prefix
PARAM_OPS = (":-", ":=", ":+", ":?", "-", "=", "+", "?", "##", "#", "%%", "%", "//", "/#", "/%", "/",
             "^^", "^", ",,", ",", ":", "@")


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


class Lexer:
    """Tokens and words of bash source. The grammar (Parser) extends it."""

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
                doc.body = type(self)(body, self.depth + 1, self.budget).read_dq(None, heredoc=True)

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

    def read_braced(self, quoted: bool) -> tuple:
        src, n = self.src, self.n
        i = self.pos + 2
        prefix = ""
        if i < n and src[i] in "#!" and i + 1 < n and src[i + 1] != "}":
            prefix = src[i]
            i += 1
        j = i
        if j < n and src[j] in NAME_START:
            while j < n and src[j] in NAME_CHARS:
                j += 1
        elif j < n and src[j].isdigit():
            while j < n and src[j].isdigit():
                j += 1
        elif j < n and src[j] in SPECIAL_PARAMS:
            j += 1
        name = src[i:j]
        if not name:
            raise ShellSyntaxError("bad substitution")
        if j < n and src[j] == "[":
            end = src.find("]", j)
            if end < 0:
                raise ShellSyntaxError("bad subscript")
            name += src[j:end + 1]
            j = end + 1
        if j < n and src[j] == "}":
            self.pos = j + 1
            return ("v", name, quoted, prefix, None)
        if prefix == "!" and j < n and src[j] in "*@" and src.startswith("}", j + 1):
            self.pos = j + 2
            return ("v", name, quoted, "!names", None)
        op = ""
        for candidate in PARAM_OPS:
            if src.startswith(candidate, j):
                op = candidate
                break
        if not op:
            raise ShellSyntaxError("bad substitution")
        self.pos = j + len(op)
        arg = self.read_brace_arg(quoted)
        return ("v", name, quoted, prefix + op, arg)

    def read_brace_arg(self, quoted: bool) -> list:
        src, n = self.src, self.n
        parts: list = []
        buf: list[str] = []
        level = 0
        while True:
            pos = self.pos
            if pos >= n:
                raise ShellSyntaxError("missing '}'")
            c = src[pos]
            if c == "}" and level == 0:
                self.pos = pos + 1
                break
            if c == "\\" and pos + 1 < n:
                _flush(parts, buf, quoted)
                if src[pos + 1] != "\n":
                    parts.append(("s", src[pos + 1], True))
                self.pos = pos + 2
            elif c == "'" and not quoted:
                end = src.find("'", pos + 1)
                if end < 0:
                    raise ShellSyntaxError("unterminated single quote")
                _flush(parts, buf, quoted)
                parts.append(("s", src[pos + 1:end], True))
                self.pos = end + 1
            elif c == '"':
                _flush(parts, buf, quoted)
                self.pos = pos + 1
                parts.extend(self.read_dq('"'))
            elif c == "$":
                _flush(parts, buf, quoted)
                parts.extend(self.read_dollar(quoted))
            elif c == "`":
                _flush(parts, buf, quoted)
                parts.append(self.read_backtick(quoted))
            else:
                if c == "{":
                    level += 1
                elif c == "}":
                    level -= 1
                buf.append(c)
                self.pos = pos + 1
        _flush(parts, buf, quoted)
        return parts

    def arith_end(self, start: int) -> int | None:
        """Where the `))` closing arithmetic that starts at `start` begins;
        None when there is none before a quote, newline or `;` (then it is a
        subshell or command substitution in parentheses after all)."""
        src, n = self.src, self.n
        j = start
        level = 0
        while j < n:
            c = src[j]
            if c == "(":
                level += 1
            elif c == ")":
                if level == 0:
                    return j if src.startswith(")", j + 1) else None
                level -= 1
            elif c in "'\"\n;":
                return None
            j += 1
        return None

    def try_arith(self, pos: int) -> tuple | None:
        """`$((..))` as arithmetic, or None when it is `$( (..) )` after all."""
        end = self.arith_end(pos + 3)
        if end is None:
            return None
        self.pos = end + 2
        return ("a", type(self)(self.src[pos + 3:end], self.depth + 1, self.budget).read_dq(None, heredoc=True))

    def read_backtick(self, quoted: bool, heredoc: bool = False) -> tuple:
        src, n = self.src, self.n
        j = self.pos + 1
        out = []
        while j < n:
            c = src[j]
            if c == "\\" and j + 1 < n:
                e = src[j + 1]
                if e in "$`\\" or (e == '"' and quoted and not heredoc):
                    out.append(e)
                else:
                    out.append(c + e)
                j += 2
                continue
            if c == "`":
                break
            out.append(c)
            j += 1
        else:
            raise ShellSyntaxError("unterminated backquote")
        self.pos = j + 1
        tree = type(self)("".join(out), self.depth + 1, self.budget).parse_script()
        return ("c", tree, quoted)

    def read_procsub(self) -> tuple:
        self.pos += 2
        tree = self.nested_list(")")
        return ("p", tree)
