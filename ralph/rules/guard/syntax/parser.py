"""The guard's bash parser: source text -> a small syntax tree.

The grammar of bash (lists, pipelines, simple commands, compound commands,
functions, arithmetic commands, `[[ .. ]]`) over the tokens and words of
ralph.rules.guard.syntax.lexer, whose Lexer this Parser extends. What it
calls a command word is what bash would run; ralph.rules.guard.interp walks
the tree.

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
from ralph.rules.guard.syntax.lexer import MAX_DEPTH, NAME_CHARS, NAME_START, Heredoc, Lexer, ShellSyntaxError, TooDeep

RESERVED_STARTS = frozenset(("if", "while", "until", "for", "select", "case", "function", "{", "[[", "!"))
DECLARATION_BUILTINS = frozenset(("declare", "typeset", "local", "export", "readonly"))


def parse(text: str, depth: int = 0, budget: object = None) -> tuple:
    """The syntax tree of a whole script. Raises ShellSyntaxError, TooDeep."""
    return Parser(text, depth, budget).parse_script()


def word_literal(word: list) -> str | None:
    """The text of a word made only of unquoted literal parts, else None."""
    if len(word) == 1 and word[0][0] == "s" and not word[0][2]:
        return word[0][1]
    return None


class Parser(Lexer):
    """The grammar of bash over the Lexer's tokens and words."""

    __slots__ = ()

    def parse_script(self) -> tuple:
        tree = self.parse_list()
        tok = self.next()
        if tok[0] != "eof":
            raise ShellSyntaxError(f"unexpected {tok[1]!r}")
        if self.pending:
            self.read_heredocs()
        return tree

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

    def parse_redirects(self, redirs: list) -> None:
        while True:
            tok = self.peek()
            if tok[0] != "r":
                return
            self.next()
            redirs.append(self.redirect_target(tok[1]))

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

    def read_array_assignment(self, name: str) -> tuple:
        """`name=( elements )`, at the `(`."""
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
        return ("=()", name, elements)

    def parse_function_definition(self, word: list) -> tuple:
        """`name () compound-command`, at the peeked `(` after the name."""
        self.next()
        if self.next() != ("op", ")"):
            raise ShellSyntaxError("expected ')' in function definition")
        name = "".join(p[1] for p in word if p[0] == "s")
        self.skip_newlines()
        return ("func", name, self.parse_command())

    def parse_subshell(self) -> tuple:
        """`( list )`, or `(( expr ))` arithmetic, at the peeked `(`."""
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

    def try_arith_command(self) -> tuple | None:
        """`(( expr ))` right after the peeked `(`."""
        start = self.pos + 1
        end = self.arith_end(start)
        if end is None:
            return None
        self.peeked = None
        self.pos = end + 2
        return ("arith", Parser(self.src[start:end], self.depth + 1, self.budget).read_dq(None, heredoc=True))

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
