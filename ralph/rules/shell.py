"""A bash parser for the push/merge guard: source text -> a small syntax tree.

It follows bash's own lexing (quotes, escapes, `$'..'`, `$(..)`, backticks,
`${..}`, `$((..))`, process substitution, heredocs, line continuations,
comments, reserved words in command position) closely enough that what it
calls a command word is what bash would run. It does not expand anything:
ralph.rules.guard walks the tree and expands words itself.

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
PARAM_OPS = (":-", ":=", ":+", ":?", "-", "=", "+", "?", "##", "#", "%%", "%", "//", "/#", "/%", "/",
             "^^", "^", ",,", ",", ":", "@")
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

    def try_arith(self, pos: int) -> tuple | None:
        """`$((..))` as arithmetic, or None when it is `$( (..) )` after all."""
        src, n = self.src, self.n
        j = pos + 3
        level = 0
        while j < n:
            c = src[j]
            if c == "(":
                level += 1
            elif c == ")":
                if level == 0:
                    if src.startswith(")", j + 1):
                        body = src[pos + 3:j]
                        self.pos = j + 2
                        return ("a", Parser(body, self.depth + 1, self.budget).read_dq(None, heredoc=True))
                    return None
                level -= 1
            elif c in "'\"\n;":
                return None
            j += 1
        return None

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
        tree = Parser("".join(out), self.depth + 1, self.budget).parse_script()
        return ("c", tree, quoted)

    def read_procsub(self) -> tuple:
        self.pos += 2
        tree = self.nested_list(")")
        return ("p", tree)

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

    def parse_redirects(self, redirs: list) -> None:
        while True:
            tok = self.peek()
            if tok[0] != "r":
                return
            self.next()
            redirs.append(self.redirect_target(tok[1]))

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
            if self.src.startswith("(", self.pos) and self.peeked is not None:
                arith = self.try_arith_command()
                if arith is not None:
                    return arith
            self.next()
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise TooDeep(f"nesting deeper than {MAX_DEPTH}")
            body = self.parse_list(stop_ops=(")",))
            if self.next() != ("op", ")"):
                raise ShellSyntaxError("missing ')'")
            self.depth -= 1
            redirs: list = []
            self.parse_redirects(redirs)
            return ("sub", body, redirs)
        if tok[0] == "w":
            literal = word_literal(tok[1])
            if literal in RESERVED_STARTS:
                return self.parse_compound(literal)
        return self.parse_simple()

    def try_arith_command(self) -> tuple | None:
        """`(( expr ))` right after the peeked `(`."""
        src, n = self.src, self.n
        start = self.pos + 1
        j = start
        level = 0
        while j < n:
            c = src[j]
            if c == "(":
                level += 1
            elif c == ")":
                if level == 0:
                    if src.startswith(")", j + 1):
                        self.peeked = None
                        self.pos = j + 2
                        return ("arith", Parser(src[start:j], self.depth + 1, self.budget).read_dq(None, heredoc=True))
                    return None
                level -= 1
            elif c in "'\"\n;":
                return None
            j += 1
        return None

    def expect_word(self, literal: str) -> None:
        while self.peek() == ("op", "\n") or self.peek() == ("op", ";"):
            self.next()
        tok = self.next()
        if tok[0] != "w" or word_literal(tok[1]) != literal:
            raise ShellSyntaxError(f"expected {literal!r}")

    def parse_compound(self, keyword: str) -> tuple:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise TooDeep(f"nesting deeper than {MAX_DEPTH}")
        self.next()
        redirs: list = []
        if keyword == "{":
            body = self.parse_list(stop_words=("}",))
            self.expect_word("}")
            node: tuple = ("grp", body, redirs)
        elif keyword == "!":
            node = ("grp", self.parse_command(), [])
        elif keyword == "if":
            parts = [self.parse_list(stop_words=("then",))]
            self.expect_word("then")
            parts.append(self.parse_list(stop_words=("elif", "else", "fi")))
            while True:
                tok = self.next()
                literal = word_literal(tok[1]) if tok[0] == "w" else None
                if literal == "elif":
                    parts.append(self.parse_list(stop_words=("then",)))
                    self.expect_word("then")
                    parts.append(self.parse_list(stop_words=("elif", "else", "fi")))
                elif literal == "else":
                    parts.append(self.parse_list(stop_words=("fi",)))
                elif literal == "fi":
                    break
                else:
                    raise ShellSyntaxError("expected 'fi'")
            node = ("if", parts, redirs)
        elif keyword in ("while", "until"):
            cond = self.parse_list(stop_words=("do",))
            self.expect_word("do")
            body = self.parse_list(stop_words=("done",))
            self.expect_word("done")
            if keyword == "until":
                cond = ("grp", cond, [])  # its status is read inverted: never a certain one
            node = ("while", cond, body, redirs)
        elif keyword in ("for", "select"):
            node = self.parse_for(redirs)
        elif keyword == "case":
            node = self.parse_case(redirs)
        elif keyword == "function":
            tok = self.next()
            name = word_literal(tok[1]) if tok[0] == "w" else None
            if not name:
                raise ShellSyntaxError("bad function name")
            if self.peek() == ("op", "("):
                self.next()
                if self.next() != ("op", ")"):
                    raise ShellSyntaxError("expected ')'")
            self.skip_newlines()
            node = ("func", name, self.parse_command())
            self.depth -= 1
            return node
        else:  # "[["
            words = []
            while True:
                tok = self.next(test_mode=True)
                if tok[0] == "eof":
                    raise ShellSyntaxError("missing ']]'")
                if tok[0] == "op":
                    continue
                if word_literal(tok[1]) == "]]":
                    break
                words.append(tok[1])
            node = ("test", words)
        self.depth -= 1
        if node[0] not in ("test",) and keyword != "!":
            self.parse_redirects(redirs)
        return node

    def parse_for(self, redirs: list) -> tuple:
        if self.peek() == ("op", "("):
            # for (( init; cond; step ))
            src = self.src
            end = src.find("))", self.pos)
            if end < 0:
                raise ShellSyntaxError("missing '))'")
            self.peeked = None
            body_text = src[self.pos + 1:end]
            self.pos = end + 2
            arith = ("arith", Parser(body_text, self.depth + 1, self.budget).read_dq(None, heredoc=True))
            self.expect_word("do")
            body = self.parse_list(stop_words=("done",))
            self.expect_word("done")
            return ("seq", [arith, ("while", ("seq", []), body, redirs)])
        tok = self.next()
        name = word_literal(tok[1]) if tok[0] == "w" else None
        if not name:
            raise ShellSyntaxError("bad for-loop variable")
        words = None
        self.skip_newlines()
        tok = self.peek()
        if tok[0] == "w" and word_literal(tok[1]) == "in":
            self.next()
            words = []
            while True:
                tok = self.peek()
                if tok[0] != "w":
                    break
                self.next()
                words.append(tok[1])
        self.expect_word("do")
        body = self.parse_list(stop_words=("done",))
        self.expect_word("done")
        return ("for", name, words, body, redirs)

    def parse_case(self, redirs: list) -> tuple:
        tok = self.next()
        if tok[0] != "w":
            raise ShellSyntaxError("bad case word")
        subject = tok[1]
        self.skip_newlines()
        self.expect_word("in")
        arms = []
        while True:
            tok = self.next()
            while tok == ("op", "\n"):
                tok = self.next()
            if tok[0] == "w" and word_literal(tok[1]) == "esac":
                break
            if tok == ("op", "("):
                tok = self.next()
            patterns = []
            while True:
                if tok[0] != "w":
                    raise ShellSyntaxError("bad case pattern")
                patterns.append(tok[1])
                tok = self.next()
                if tok == ("op", "|"):
                    tok = self.next()
                    continue
                if tok == ("op", ")"):
                    break
                raise ShellSyntaxError("expected ')' after case pattern")
            body = self.parse_list(stop_words=("esac",), stop_ops=(";;", ";&", ";;&"))
            arms.append((patterns, body))
            tok = self.peek()
            if tok[0] == "op" and tok[1] in (";;", ";&", ";;&"):
                self.next()
        return ("case", subject, arms, redirs)

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
                    # name () compound-command
                    self.next()
                    if self.next() != ("op", ")"):
                        raise ShellSyntaxError("expected ')' in function definition")
                    name = "".join(p[1] for p in word if p[0] == "s")
                    self.skip_newlines()
                    return ("func", name, self.parse_command())
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
            # name=( elements )
            self.pos += 1
            elements = []
            while True:
                tok = self.next()
                if tok == ("op", "\n"):
                    continue
                if tok == ("op", ")"):
                    break
                if tok[0] != "w":
                    raise ShellSyntaxError("bad array assignment")
                elements.append(tok[1])
            return ("=()", base, elements)
        return ("=", base, value)


DECLARATION_BUILTINS = frozenset(("declare", "typeset", "local", "export", "readonly"))
