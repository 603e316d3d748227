"""The parts of the bash parser typical commands never reach, loaded on first
use: compound commands (`if`, `while`/`until`, `for`/`select`, `case`,
`{ ..; }`, `( .. )`, `!`, `[[ .. ]]`, functions), arithmetic (`(( .. ))`,
`$(( .. ))`), `${..}` parameter expansions, backticks, process substitution
and array assignments.

RareSyntax is mixed into ralph.rules.guard.shell.Parser by shell.full_parser() the
first time a parse calls one of its methods (Parser.__getattr__): most
commands an agent runs are simple commands, pipelines and `&&` lists, and each
hook call would pay for importing the rest.
"""
from ralph.rules.guard.shell import (MAX_DEPTH, NAME_CHARS, NAME_START, SPECIAL_PARAMS, Parser, ShellSyntaxError, TooDeep, _flush,
                               word_literal)

# the operators of `${name<op>arg}`, each before any that is its prefix
PARAM_OPS = (":-", ":=", ":+", ":?", "-", "=", "+", "?", "##", "#", "%%", "%", "//", "/#", "/%", "/",
             "^^", "^", ",,", ",", ":", "@")


class RareSyntax:
    """Parser methods for the rarely used syntax (mixed into shell.Parser)."""

    __slots__ = ()

    # ---- words ----

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
        return ("a", Parser(self.src[pos + 3:end], self.depth + 1, self.budget).read_dq(None, heredoc=True))

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

    def parse_redirects(self, redirs: list) -> None:
        while True:
            tok = self.peek()
            if tok[0] != "r":
                return
            self.next()
            redirs.append(self.redirect_target(tok[1]))

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

    def parse_function_definition(self, word: list) -> tuple:
        """`name () compound-command`, at the peeked `(` after the name."""
        self.next()
        if self.next() != ("op", ")"):
            raise ShellSyntaxError("expected ')' in function definition")
        name = "".join(p[1] for p in word if p[0] == "s")
        self.skip_newlines()
        return ("func", name, self.parse_command())

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
