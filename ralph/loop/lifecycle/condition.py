"""`when` conditions: a small expression language, parsed by a recursive-descent
parser into a tree and evaluated against the context. Pure: no I/O, no eval.

    expr    := or
    or      := and ( "||" and )*
    and     := unary ( "&&" unary )*
    unary   := "!" unary | compare
    compare := modulo ( ("==" | "!=" | "<" | ">" | "<=" | ">=") modulo )?
    modulo  := atom ( "%" atom )*
    atom    := NUMBER | STRING | VARIABLE | "true" | "false" | "(" expr ")"

Variables are `${NAME}` (or bare `$NAME`). Strings are '...' or "..." with
backslash escapes. A comparison is numeric when both sides are numbers
(`${ITERATION} == 10`, also "10" read from the context), else it compares
text. A value alone is true unless it is empty, "0" or "false".
"""
from __future__ import annotations

from ralph.loop.identifiers import name_end


class ConditionError(ValueError):
    """A syntax error (at load time) or a value error (at evaluation)."""

    def __init__(self, message: str, column: int | None = None) -> None:
        super().__init__(message)
        self.column = column


# The tokens, as this (re.VERBOSE) regular expression defines them; read by
# hand (token_at(); tests/test_lifecycle_hand_parsers.py holds it to the
# expression) because `ralph-loop --dry-run` parses every `when` and
# importing `re` would cost it more than the parsing.
TOKEN = r"""
    (?P<space>\s+)
  | (?P<number>\d+(?:\.\d+)?)
  | (?P<var>\$\{[A-Za-z_][A-Za-z0-9_]*\}|\$[A-Za-z_][A-Za-z0-9_]*)
  | (?P<string>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
  | (?P<op>&&|\|\||==|!=|<=|>=|<|>|%|!|\(|\))
  | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
"""
OPERATORS = ("&&", "||", "==", "!=", "<=", ">=", "<", ">", "%", "!", "(", ")")  # in TOKEN's order


def _digits_end(text: str, index: int) -> int:
    while index < len(text) and text[index].isdecimal():  # `\d` is str.isdecimal() (category Nd)
        index += 1
    return index


def token_at(source: str, position: int) -> tuple[str, int] | None:
    """(kind, end) of the TOKEN match at position; None when nothing matches."""
    char = source[position]
    if char.isspace():  # `\s` is str.isspace()
        end = position + 1
        while end < len(source) and source[end].isspace():
            end += 1
        return "space", end
    if char.isdecimal():
        end = _digits_end(source, position)
        if source.startswith(".", end):
            fraction = _digits_end(source, end + 1)
            if fraction > end + 1:
                end = fraction
        return "number", end
    if char == "$":
        if source.startswith("{", position + 1):
            end = name_end(source, position + 2)
            return ("var", end + 1) if end > position + 2 and source.startswith("}", end) else None
        end = name_end(source, position + 1)
        return ("var", end) if end > position + 1 else None
    if char in "'\"":
        index = position + 1
        while index < len(source):
            if source[index] == char:
                return "string", index + 1
            if source[index] == "\\":
                if index + 1 >= len(source) or source[index + 1] == "\n":  # `.` is anything but a newline
                    return None
                index += 1
            index += 1
        return None
    for op in OPERATORS:
        if source.startswith(op, position):
            return "op", position + len(op)
    end = name_end(source, position)
    return ("word", end) if end > position else None


COMPARISONS = ("==", "!=", "<", ">", "<=", ">=")


def tokenize(source: str) -> list[tuple[str, str, int]]:
    """(kind, text, column) tokens, ending with ("end", "", len)."""
    tokens = []
    position = 0
    while position < len(source):
        m = token_at(source, position)
        if m is None:
            char = source[position]
            if char in "'\"":
                raise ConditionError(f"unterminated string starting at column {position + 1}", position + 1)
            hint = " (use == to compare)" if char == "=" else " (variables are written ${NAME})" if char == "$" else ""
            raise ConditionError(f"unexpected {char!r} at column {position + 1}{hint}", position + 1)
        kind, end = m
        if kind != "space":
            tokens.append((kind, source[position:end], position + 1))
        position = end
    tokens.append(("end", "", len(source) + 1))
    return tokens


class Parser:
    def __init__(self, source: str) -> None:
        self.source = source
        self.tokens = tokenize(source)
        self.index = 0

    def peek(self) -> tuple[str, str, int]:
        return self.tokens[self.index]

    def take(self) -> tuple[str, str, int]:
        token = self.tokens[self.index]
        self.index += 1
        return token

    def expect_op(self, text: str) -> None:
        kind, value, column = self.take()
        if kind != "op" or value != text:
            found = "the end" if kind == "end" else repr(value)
            raise ConditionError(f"expected {text!r} at column {column}, found {found}", column)

    def parse(self) -> tuple:
        if self.peek()[0] == "end":
            raise ConditionError("empty condition", 1)
        tree = self.parse_or()
        kind, value, column = self.peek()
        if kind != "end":
            raise ConditionError(f"unexpected {value!r} at column {column}", column)
        return tree

    def parse_or(self) -> tuple:
        left = self.parse_and()
        while self.peek()[:2] == ("op", "||"):
            self.take()
            left = ("or", left, self.parse_and())
        return left

    def parse_and(self) -> tuple:
        left = self.parse_unary()
        while self.peek()[:2] == ("op", "&&"):
            self.take()
            left = ("and", left, self.parse_unary())
        return left

    def parse_unary(self) -> tuple:
        if self.peek()[:2] == ("op", "!"):
            self.take()
            return ("not", self.parse_unary())
        return self.parse_compare()

    def parse_compare(self) -> tuple:
        left = self.parse_modulo()
        kind, value, _ = self.peek()
        if kind == "op" and value in COMPARISONS:
            self.take()
            right = self.parse_modulo()
            after = self.peek()
            if after[0] == "op" and after[1] in COMPARISONS:
                raise ConditionError(f"comparisons do not chain: add && at column {after[2]}", after[2])
            return ("cmp", value, left, right)
        return left

    def parse_modulo(self) -> tuple:
        left = self.parse_atom()
        while self.peek()[:2] == ("op", "%"):
            column = self.take()[2]
            left = ("mod", left, self.parse_atom(), column)
        return left

    def parse_atom(self) -> tuple:
        kind, value, column = self.take()
        if kind == "number":
            return ("num", float(value) if "." in value else int(value))
        if kind == "string":
            return ("str", unescape(value[1:-1]))
        if kind == "var":
            name = value[2:-1] if value.startswith("${") else value[1:]
            return ("var", name, column)
        if kind == "word":
            if value in ("true", "false"):
                return ("bool", value == "true")
            raise ConditionError(f"bare word {value!r} at column {column}: quote text ('{value}') or write a variable as ${{{value}}}", column)
        if kind == "op" and value == "(":
            inner = self.parse_or()
            self.expect_op(")")
            return inner
        found = "the end of the condition" if kind == "end" else repr(value)
        raise ConditionError(f"expected a value at column {column}, found {found}", column)


def unescape(text: str) -> str:
    """re.sub(r"\\\\(.)", r"\\1", text): a backslash and the character after it
    (not a newline) become that character."""
    out = []
    index = 0
    while index < len(text):
        if text[index] == "\\" and index + 1 < len(text) and text[index + 1] != "\n":
            index += 1
        out.append(text[index])
        index += 1
    return "".join(out)


def parse(source: str) -> tuple:
    """The condition's tree; ConditionError names the column of a syntax error."""
    return Parser(source).parse()


def variables(tree: tuple) -> list[tuple[str, int]]:
    """(name, column) of every variable the condition reads."""
    found: list[tuple[str, int]] = []
    kind = tree[0]
    if kind == "var":
        found.append((tree[1], tree[2]))
    elif kind in ("or", "and"):
        found += variables(tree[1]) + variables(tree[2])
    elif kind == "not":
        found += variables(tree[1])
    elif kind == "cmp":
        found += variables(tree[2]) + variables(tree[3])
    elif kind == "mod":
        found += variables(tree[1]) + variables(tree[2])
    return found


def number(value: object) -> int | float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, str):
        text = value.strip()
        digits = text[1:] if text.startswith("-") else text
        whole, dot, fraction = digits.partition(".")
        if whole.isdecimal() and not dot:  # -?\d+ (`\d` is str.isdecimal())
            return int(text)
        if whole.isdecimal() and fraction.isdecimal():  # -?\d+\.\d+
            return float(text)
    return None


def truthy(value: object) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return value != 0
    return str(value).strip().lower() not in ("", "0", "false")


def value_of(tree: tuple, lookup: object) -> object:
    kind = tree[0]
    if kind in ("num", "str", "bool"):
        return tree[1]
    if kind == "var":
        return lookup(tree[1])  # type: ignore[operator]
    if kind == "mod":
        left, right = value_of(tree[1], lookup), value_of(tree[2], lookup)
        a, b = number(left), number(right)
        if a is None or b is None:
            raise ConditionError(f"% needs numbers, got {left!r} % {right!r}")
        if b == 0:
            raise ConditionError("% by zero")
        return a % b
    return evaluate_tree(tree, lookup)


def evaluate_tree(tree: tuple, lookup: object) -> bool:
    kind = tree[0]
    if kind == "or":
        return evaluate_tree(tree[1], lookup) or evaluate_tree(tree[2], lookup)
    if kind == "and":
        return evaluate_tree(tree[1], lookup) and evaluate_tree(tree[2], lookup)
    if kind == "not":
        return not evaluate_tree(tree[1], lookup)
    if kind == "cmp":
        op = tree[1]
        left, right = value_of(tree[2], lookup), value_of(tree[3], lookup)
        a, b = number(left), number(right)
        if a is None or b is None:
            if isinstance(left, bool) or isinstance(right, bool):
                a, b = truthy(left), truthy(right)
            else:
                a, b = str(left), str(right)
        if op == "==":
            return a == b
        if op == "!=":
            return a != b
        if op == "<":
            return a < b  # type: ignore[operator]
        if op == ">":
            return a > b  # type: ignore[operator]
        if op == "<=":
            return a <= b  # type: ignore[operator]
        return a >= b  # type: ignore[operator]
    return truthy(value_of(tree, lookup))


def evaluate(tree: tuple, values: dict[str, str], resolve: object = None) -> bool:
    """True/False for the context; ConditionError for a value error (% of text).
    `resolve(name)` maps a variable name to a key of `values` (None: unknown)."""
    def lookup(name: str) -> object:
        key = resolve(name) if resolve is not None else name  # type: ignore[operator]
        if key is None or key not in values:
            return ""
        return values[key]

    return evaluate_tree(tree, lookup)
