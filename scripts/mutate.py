#!/usr/bin/env python3
"""A small mutation run: do the tests notice when a module's code is broken?

A mutant is a one-token change to one module, found by walking its syntax tree:

  compare    `==`/`!=`, `in`/`not in`, `is`/`is not` swapped; `<`/`<=` and
             `>`/`>=` moved by one (the boundary)
  boolop     `and` <-> `or`
  not        `not x` -> `x`, `~x` -> `x`
  negate     the test of an `if`, `elif`, `while` or `x if test else y` negated
  binop      `+`/`-`, `*`/`/`, `//` -> `*`, `|`/`&` swapped (also in `+=`, ...)
  constant   a number n -> n + 1; True <-> False; a string or bytes s -> "XX" s "XX"
             ("" -> "XX")
  delete     one element of a literal tuple, list, set or dict deleted (a
             table entry, a marker, a pattern)
  remove     one simple statement in a function replaced by `pass` (a call,
             an assignment, a return, a raise, break, continue)

Not mutated, because it is not behaviour: docstrings, annotations, imports,
`__slots__`, the insides of f-strings and text for people (a string of three
or more words: a changed wording is not a safety change), and whatever sits
under `if __name__ == "__main__":`. A mutant whose code compiles to the same
syntax tree as the module or as an earlier mutant is dropped.

Each mutant is written over the module in the checkout (so the `ralph`
subprocesses the tests start, which import the checkout through the editable
install, run it too), its bytecode cache removed before and after (a `.pyc`
of the same size and second would otherwise be taken for it; PYTHONDONTWRITEBYTECODE
is set, but hooks run as `python -I` ignore it), and the chosen tests run with
`pytest -x` under a per-mutant timeout (a multiple of the unmutated run's
time). The module is put back byte for byte after each mutant, and at the
start of the next run if this one was killed (the original waits in the git
directory, `ralph-mutate/`). Exit status 1 when a module is below --min.

  scripts/mutate.py ralph/rules/redact.py -- tests/test_redact.py tests/test_secrets.py
  scripts/mutate.py --safety                  # the safety-critical modules and their tests
  scripts/mutate.py --safety --sample 40      # 40 mutants per module (seeded: the same 40 each run)
  scripts/mutate.py --list ralph/loop/recovery.py
  scripts/mutate.py ralph/loop/recovery.py --only 17 23 -- tests/test_loop_crash.py

Survivors are printed with their diff. A survivor judged equivalent (no test
could tell it from the module: it cannot change behaviour) is listed in
scripts/mutate_equivalent.json with its reason; it is reported as such, and
counted apart (`killed / (total - equivalent)`) only with --discount-equivalent.
"""
from __future__ import annotations

import argparse
import ast
import difflib
import glob
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EQUIVALENT_FILE = os.path.join(ROOT, "scripts", "mutate_equivalent.json")

# The safety-critical modules (issue "Tests that would notice"), each with
# the tests that reach it, quick ones first: -x stops at the first failure.
SAFETY = {
    "ralph/rules/read_before_edit.py": ["tests/test_read_before_edit.py"],
    "ralph/rules/redact.py": ["tests/test_redact.py", "tests/test_secrets.py"],
    # the git model, in three modules: every call's options and subcommand, config and aliases, the subcommands judged apart
    **dict.fromkeys(("ralph/rules/guard/programs/git.py", "ralph/rules/guard/programs/git_config.py",
                     "ralph/rules/guard/programs/git_subcommands.py"), [
        "tests/test_mutation_git.py", "tests/test_guard.py",
        # the same judgements as test_corpus_direct, through subprocesses: slow, and adds nothing here
        "--deselect", "tests/test_guard.py::test_corpus_through_pre_tool",
    ]),
    "ralph/loop/recovery.py": ["tests/test_mutation_recovery.py", "tests/test_loop_crash.py"],
    "ralph/rollback/capture.py": ["tests/test_mutation_rollback.py", "tests/test_rollback.py", "tests/test_rollback_hardening.py",
                                  "tests/test_rollback_keeps_records.py"],
    "ralph/rollback/restore.py": ["tests/test_mutation_rollback.py", "tests/test_rollback.py", "tests/test_rollback_hardening.py",
                                  "tests/test_rollback_keeps_records.py"],
}

COMPARE_SWAP = {
    ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot,
    ast.IsNot: ast.Is, ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
}
BINOP_SWAP = {
    ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult, ast.FloorDiv: ast.Mult,
    ast.BitOr: ast.BitAnd, ast.BitAnd: ast.BitOr,
}
REMOVABLE = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Raise, ast.Delete, ast.Continue, ast.Break)
PROSE = re.compile(r"[A-Za-z]{2,}")


class Mutant:
    __slots__ = ("number", "line", "kind", "before", "after", "source", "signature")

    def __init__(self, line: int, kind: str, before: str, after: str, source: str, context: str) -> None:
        self.number = 0
        self.line = line
        self.kind = kind
        self.before = before
        self.after = after
        self.source = source
        # stable across edits elsewhere in the module: what changed, on which line of code (not its number)
        self.signature = f"{kind}: {short(before, 200)} -> {short(after, 200)} | {short(context, 200)}"

    def describe(self) -> str:
        return f"#{self.number} line {self.line} {self.kind}: {short(self.before)} -> {short(self.after)}"

    def diff(self, original: str, path: str) -> str:
        lines = difflib.unified_diff(original.splitlines(True), self.source.splitlines(True), path, path + " (mutant)", n=1)
        return "".join(list(lines)[2:])


def short(text: str, limit: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def is_prose(value: str) -> bool:
    """Text for people: three or more words, with spaces, and nothing of a pattern."""
    return " " in value.strip() and len(PROSE.findall(value)) >= 3 and "\\" not in value and "(?" not in value


def regex_alternatives_dropped(text: str) -> list[tuple[str, str]]:
    """A regular expression with one `a|b|c` alternative left out, for each
    alternative of each group (the entries of a pattern's table)."""
    if "|" not in text or not any(mark in text for mark in ("(?", "\\", "[")):
        return []
    try:
        re.compile(text)
    except re.error:
        return []
    groups: list[list[int]] = [[-1]]  # per open group: where it starts, then each `|`
    spans: list[tuple[int, list[int], int]] = []
    i, in_class = 0, False
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            if text[i + 1:i + 2] == "]" or text[i + 1:i + 3] == "^]":
                i += 2 if text[i + 1] == "]" else 3
                continue
        elif c == "(":
            header = re.match(r"\(\?(?:[:=!]|<[=!]|P<\w+>|[aiLmsux-]+:)?", text[i:]).group(0)
            if text[i:i + 2] == "(?" and header == "(?":  # inline flags (?i): no group
                i = text.index(")", i) + 1
                continue
            groups.append([i + len(header) - 1])
        elif c == "|":
            groups[-1].append(i)
        elif c == ")" and len(groups) > 1:
            bars = groups.pop()
            spans.append((bars[0], bars[1:], i))
        i += 1
    top = groups.pop()
    spans.append((top[0], top[1:], len(text)))
    found = []
    for start, bars, end in spans:
        if not bars:
            continue
        cuts = [start] + bars + [end]
        for k in range(len(cuts) - 1):
            left, right = cuts[k], cuts[k + 1]
            # drop the alternative and one of the bars next to it
            shorter = text[:left + 1] + text[right + 1:] if k == 0 else text[:left] + text[right:]
            try:
                re.compile(shorter)
            except re.error:
                continue
            if shorter != text:
                found.append((text[left + 1:right], shorter))
    return found


class Finder(ast.NodeVisitor):
    """Walks a module and proposes (node, replacement node, kind) edits."""

    def __init__(self) -> None:
        # (node replaced, its replacement, kind, (what went, from where, line) for a deletion, else None)
        self.edits: list[tuple[ast.AST, ast.AST, str, tuple[str, str, int] | None]] = []
        self.skip: set[int] = set()
        self.elements: set[int] = set()  # string entries of literal tables
        self.records: set[int] = set()  # tuples of one shape in a table: fixed fields, not entries
        self.depth = 0  # inside a function

    def mark(self, node: ast.AST | None) -> None:
        if node is not None:
            for inner in ast.walk(node):
                self.skip.add(id(inner))

    def edit(self, node: ast.AST, replacement: ast.AST, kind: str) -> None:
        self.edits.append((node, replacement, kind, None))

    def generic_visit(self, node: ast.AST) -> None:
        if id(node) in self.skip:
            return
        super().generic_visit(node)

    # ---- what is not behaviour ----

    def _body_docstring(self, body: list[ast.stmt]) -> None:
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            self.mark(body[0])

    def visit_Module(self, node: ast.Module) -> None:
        self._body_docstring(node.body)
        self.generic_visit(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._body_docstring(node.body)
        for stmt in node.body:
            if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__slots__" for t in stmt.targets):
                self.mark(stmt)
        self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._body_docstring(node.body)
        self.mark(node.returns)
        for arg in node.args.posonlyargs + node.args.args + node.args.kwonlyargs + [node.args.vararg, node.args.kwarg]:
            if arg is not None:
                self.mark(arg.annotation)
        self.depth += 1
        for stmt in node.body:
            self._removal(stmt)
        self.generic_visit(node)
        self.depth -= 1

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Import(self, node: ast.AST) -> None:
        self.mark(node)

    visit_ImportFrom = visit_Import

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        self.mark(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.mark(node.annotation)
        self.generic_visit(node)

    def visit_If(self, node: ast.If) -> None:
        test = node.test
        if (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__") or \
                (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING"):
            self.mark(node)
            return
        self._negate(test)
        self._bodies(node)
        self.generic_visit(node)

    # ---- the operators ----

    def _bodies(self, node: ast.AST) -> None:
        if self.depth:
            for field in ("body", "orelse", "finalbody"):
                for stmt in getattr(node, field, None) or []:
                    self._removal(stmt)
            for handler in getattr(node, "handlers", None) or []:
                for stmt in handler.body:
                    self._removal(stmt)

    def _removal(self, stmt: ast.stmt) -> None:
        if id(stmt) in self.skip or not isinstance(stmt, REMOVABLE):
            return
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            return  # a docstring or a bare constant: nothing to remove
        self.edit(stmt, ast.Pass(), "remove")

    def _negate(self, test: ast.expr) -> None:
        if id(test) in self.skip:
            return
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return  # the `not` operator below already removes it
        self.edit(test, ast.UnaryOp(ast.Not(), test), "negate")

    def visit_While(self, node: ast.While) -> None:
        self._negate(node.test)
        self._bodies(node)
        self.generic_visit(node)

    def visit_For(self, node: ast.For) -> None:
        self._bodies(node)
        self.generic_visit(node)

    def visit_With(self, node: ast.With) -> None:
        self._bodies(node)
        self.generic_visit(node)

    def visit_Try(self, node: ast.Try) -> None:
        self._bodies(node)
        self.generic_visit(node)

    def visit_IfExp(self, node: ast.IfExp) -> None:
        self._negate(node.test)
        self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        for i, op in enumerate(node.ops):
            ops = list(node.ops)
            ops[i] = COMPARE_SWAP[type(op)]()
            self.edit(node, ast.Compare(node.left, ops, node.comparators), "compare")
        self.generic_visit(node)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        other = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        self.edit(node, ast.BoolOp(other, node.values), "boolop")
        self.generic_visit(node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> None:
        if isinstance(node.op, (ast.Not, ast.Invert)):
            self.edit(node, node.operand, "not")
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        swap = BINOP_SWAP.get(type(node.op))
        if swap:
            self.edit(node, ast.BinOp(node.left, swap(), node.right), "binop")
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        swap = BINOP_SWAP.get(type(node.op))
        if swap and id(node) not in self.skip:
            self.edit(node, ast.AugAssign(node.target, swap(), node.value), "binop")
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if id(node) in self.elements:
            return  # an entry of a literal table: deleting it is the mutant
        value = node.value
        if isinstance(value, bool):
            self.edit(node, ast.Constant(not value), "constant")
        elif isinstance(value, (int, float)):
            self.edit(node, ast.Constant(value + 1), "constant")
        elif isinstance(value, str) and not is_prose(value):
            self.edit(node, ast.Constant("XX" + value + "XX"), "constant")
            for dropped, shorter in regex_alternatives_dropped(value):
                self.edits.append((node, ast.Constant(shorter), "regex", (repr(dropped), "dropped from " + short(repr(value), 40), node.lineno)))
        elif isinstance(value, bytes):
            self.edit(node, ast.Constant(b"XX" + value + b"XX"), "constant")

    def _delete(self, node: ast.AST, elements: list, rebuild) -> None:
        if getattr(node, "ctx", None) is not None and not isinstance(node.ctx, ast.Load):
            return
        if len(elements) > 1 and all(isinstance(e, ast.Tuple) for e in elements) and len({len(e.elts) for e in elements}) == 1:
            self.records.update(id(e) for e in elements)  # (name, pattern) rows: a row goes, not a field
        if id(node) in self.records:
            return
        for i, element in enumerate(elements):
            if isinstance(element, ast.Starred):
                continue
            if isinstance(element, ast.Constant) and isinstance(element.value, (str, bytes)):
                self.elements.add(id(element))
            self.edits.append((node, rebuild(i), "delete", (ast.unparse(element), "deleted from " + short(ast.unparse(node), 40), element.lineno)))

    def visit_Tuple(self, node: ast.Tuple) -> None:
        self._delete(node, node.elts, lambda i: ast.Tuple(node.elts[:i] + node.elts[i + 1:], ast.Load()))
        self.generic_visit(node)

    def visit_List(self, node: ast.List) -> None:
        self._delete(node, node.elts, lambda i: ast.List(node.elts[:i] + node.elts[i + 1:], ast.Load()))
        self.generic_visit(node)

    def visit_Set(self, node: ast.Set) -> None:
        def rebuild(i: int) -> ast.AST:
            rest = node.elts[:i] + node.elts[i + 1:]
            return ast.Set(rest) if rest else ast.Call(ast.Name("set", ast.Load()), [], [])
        self._delete(node, node.elts, rebuild)
        self.generic_visit(node)

    def visit_Dict(self, node: ast.Dict) -> None:
        if None not in node.keys:
            self._delete(node, node.keys, lambda i: ast.Dict(node.keys[:i] + node.keys[i + 1:], node.values[:i] + node.values[i + 1:]))
        self.generic_visit(node)


def offsets(source: str) -> list[int]:
    """Character offset of the start of each line (1-based line numbers index it)."""
    starts = [0, 0]
    for line in source.splitlines(True):
        starts.append(starts[-1] + len(line))
    return starts


def to_index(source_lines: list[str], starts: list[int], line: int, col: int) -> int:
    """ast columns are UTF-8 byte offsets; the text is indexed by character."""
    text = source_lines[line - 1]
    return starts[line] + len(text.encode("utf-8")[:col].decode("utf-8", "replace"))


def find_mutants(source: str, path: str) -> list[Mutant]:
    tree = ast.parse(source, path)
    finder = Finder()
    finder.visit(tree)
    lines = source.splitlines(True)
    starts = offsets(source)
    seen = {ast.dump(tree)}
    mutants = []
    for node, replacement, kind, label in sorted(finder.edits, key=lambda e: (e[0].lineno, e[0].col_offset)):
        if id(node) in finder.skip:
            continue
        start = to_index(lines, starts, node.lineno, node.col_offset)
        end = to_index(lines, starts, node.end_lineno, node.end_col_offset)
        text = ast.unparse(replacement)
        if not isinstance(replacement, (ast.stmt, ast.Constant, ast.Name)):
            text = f"({text})"  # an expression in its old place: parentheses keep its meaning
        mutated = source[:start] + text + source[end:]
        before, after, line = label or (source[start:end], text, node.lineno)  # a deletion names the entry, not the whole table
        try:
            dump = ast.dump(ast.parse(mutated, path))
        except SyntaxError:
            continue
        if dump in seen:
            continue
        seen.add(dump)
        mutants.append(Mutant(line, kind, before, after, mutated, lines[line - 1]))
    seen_signatures: dict[str, int] = {}
    for number, mutant in enumerate(mutants, 1):
        mutant.number = number
        count = seen_signatures[mutant.signature] = seen_signatures.get(mutant.signature, 0) + 1
        if count > 1:  # the same change twice on one line: told apart by its place on it
            mutant.signature += f" [{count}]"
    return mutants


# ---- running ----


def backup_dir() -> str:
    out = subprocess.run(["git", "rev-parse", "--git-path", "ralph-mutate"], cwd=ROOT, capture_output=True, text=True, check=True)
    path = out.stdout.strip()
    return path if os.path.isabs(path) else os.path.join(ROOT, path)


def backup_path(module: str) -> str:
    """Where the original waits while its mutants run: named by the module and this run's pid."""
    return os.path.join(backup_dir(), f"{module.replace('/', '__')}.{os.getpid()}")


def put_back_leftovers() -> None:
    """A run killed mid-mutant left its original in the git dir: put it back
    (a run still going, in another terminal, keeps its own)."""
    folder = backup_dir()
    if not os.path.isdir(folder):
        return
    for name in os.listdir(folder):
        stem, _, pid = name.rpartition(".")
        if pid.isdigit() and process_alive(int(pid)):
            continue
        module = stem.replace("__", "/")
        with open(os.path.join(folder, name), "rb") as f:
            original = f.read()
        write_module(module, original)
        os.unlink(os.path.join(folder, name))
        print(f"mutate: put back {module} left mutated by an interrupted run", file=sys.stderr)


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def drop_bytecode(module: str) -> None:
    folder = os.path.join(ROOT, os.path.dirname(module), "__pycache__")
    stem = os.path.splitext(os.path.basename(module))[0]
    for path in glob.glob(os.path.join(folder, f"{stem}.*.pyc")):
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


def write_module(module: str, data: bytes) -> None:
    path = os.path.join(ROOT, module)
    tmp = path + ".mutate-tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)
    drop_bytecode(module)


def run_tests(tests: list[str], timeout: float | None, workdir: str) -> tuple[str, float, str]:
    """('passed'|'failed'|'timeout', seconds, the tail of the output)."""
    # the same run for every mutant: hypothesis and the kill trials draw from fixed seeds
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0", RALPH_KILL_SEED="0")
    env.pop("CLAUDE_PROJECT_DIR", None)
    basetemp = tempfile.mkdtemp(prefix="t", dir=workdir)
    argv = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "--hypothesis-seed=0", f"--basetemp={basetemp}", *tests]
    started = time.monotonic()
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
        status = "passed" if proc.returncode == 0 else "failed"
    except subprocess.TimeoutExpired:
        out = b""
        status = "timeout"
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # and whatever the tests left running
        except ProcessLookupError:
            pass
        proc.wait()
        shutil.rmtree(basetemp, ignore_errors=True)
    tail = "\n".join(out.decode("utf-8", "replace").strip().splitlines()[-3:])
    return status, time.monotonic() - started, tail


def load_equivalent() -> dict[str, dict[str, str]]:
    try:
        with open(EQUIVALENT_FILE, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        return {}


def mutate_module(module: str, tests: list[str], args: argparse.Namespace, equivalent: dict[str, str], workdir: str) -> dict:
    path = os.path.join(ROOT, module)
    with open(path, "rb") as f:
        original_bytes = f.read()
    original = original_bytes.decode("utf-8")
    mutants = find_mutants(original, module)
    total = len(mutants)
    if args.only:
        mutants = [m for m in mutants if m.number in args.only]
    elif args.sample and args.sample < len(mutants):
        picked = random.Random(f"{args.seed}:{module}").sample(range(len(mutants)), args.sample)
        mutants = [mutants[i] for i in sorted(picked)]
    print(f"== {module}: {len(mutants)} of {total} mutants; tests: {' '.join(tests)}", flush=True)
    if args.list:
        for m in mutants:
            print("  " + m.describe())
        return {"module": module, "total": total, "run": 0}

    status, seconds, tail = run_tests(tests, None, workdir)
    if status != "passed":
        print(f"   the tests fail without any mutant; fix them first:\n{tail}", flush=True)
        return {"module": module, "error": "tests fail unmutated"}
    timeout = seconds * args.timeout_factor + 30
    print(f"   unmutated: passed in {seconds:.0f} s; timeout per mutant {timeout:.0f} s", flush=True)

    os.makedirs(backup_dir(), exist_ok=True)
    keep = backup_path(module)
    with open(keep, "wb") as f:
        f.write(original_bytes)
    results = []
    try:
        for mutant in mutants:
            write_module(module, mutant.source.encode("utf-8"))
            try:
                status, seconds, tail = run_tests(tests, timeout, workdir)
            finally:
                write_module(module, original_bytes)
            killed = status != "passed"
            note = equivalent.get(mutant.signature)
            word = {"failed": "killed ", "timeout": "timeout", "passed": "EQUIV  " if note else "SURVIVE"}[status]
            print(f"   {word} {mutant.describe()} ({seconds:.0f} s)", flush=True)
            if not killed:
                if note:
                    print(f"           equivalent: {note}", flush=True)
                else:
                    print("           " + mutant.diff(original, module).replace("\n", "\n           ").rstrip(), flush=True)
            results.append({"number": mutant.number, "line": mutant.line, "kind": mutant.kind, "status": status,
                            "before": mutant.before, "after": mutant.after, "signature": mutant.signature,
                            "equivalent": note or ""})
    finally:
        write_module(module, original_bytes)
        os.unlink(keep)
    killed = sum(1 for r in results if r["status"] != "passed")
    equiv = sum(1 for r in results if r["status"] == "passed" and r["equivalent"])
    summary = {"module": module, "total": total, "run": len(results), "killed": killed, "equivalent": equiv, "mutants": results}
    print(f"   {module}: {figure(summary, args.discount_equivalent)}", flush=True)
    return summary


def percent(summary: dict, discount: bool) -> float:
    counted = summary["run"] - (summary["equivalent"] if discount else 0)
    return 100.0 * summary["killed"] / counted if counted else 100.0


def figure(summary: dict, discount: bool) -> str:
    text = f"{summary['killed']}/{summary['run']} killed ({100.0 * summary['killed'] / max(summary['run'], 1):.0f} %)"
    if summary["equivalent"]:
        counted = summary["run"] - summary["equivalent"]
        text += f"; {summary['equivalent']} survivor(s) judged equivalent"
        text += f", {summary['killed']}/{counted} of the rest ({100.0 * summary['killed'] / max(counted, 1):.0f} %)"
    return text


def main() -> int:
    parser = argparse.ArgumentParser(usage="%(prog)s [options] (MODULE | --safety) [-- PYTEST ARGS]",
                                     description=__doc__.split("\n\n")[0], epilog="See the module docstring for the operators.")
    parser.add_argument("module", nargs="?", help="a module path in the checkout (ralph/...py)")
    parser.add_argument("--safety", action="store_true", help="every module of SAFETY with its tests")
    parser.add_argument("--sample", type=int, default=0, help="run N mutants per module, picked with --seed")
    parser.add_argument("--seed", default="0")
    parser.add_argument("--only", type=int, nargs="+", help="run only these mutant numbers (as --list shows them)")
    parser.add_argument("--list", action="store_true", help="list the mutants, run nothing")
    parser.add_argument("--timeout-factor", type=float, default=4.0, help="per-mutant timeout: the unmutated run's time x this + 30 s")
    parser.add_argument("--min", type=float, default=0.0, help="exit 1 when a module is below this percentage killed")
    parser.add_argument("--discount-equivalent", action="store_true",
                        help="count survivors listed in scripts/mutate_equivalent.json apart from the total")
    parser.add_argument("--json", help="write the results here")
    argv = sys.argv[1:]
    tests = argv[argv.index("--") + 1:] if "--" in argv else []  # pytest's arguments (default: the module's entry in SAFETY)
    args = parser.parse_args(argv[:argv.index("--")] if "--" in argv else argv)

    if args.safety:
        plan = list(SAFETY.items())
    elif args.module:
        module = os.path.relpath(os.path.abspath(args.module), ROOT)
        tests = tests or SAFETY.get(module)
        if not tests:
            parser.error(f"no tests given for {module} (scripts/mutate.py {module} -- tests/test_x.py)")
        plan = [(module, tests)]
    else:
        parser.error("name a module, or --safety")
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends the listing quietly
    if not args.list:
        put_back_leftovers()
    equivalent_table = load_equivalent()

    def stop(signum: int, _frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, stop)
    summaries = []
    workdir = tempfile.mkdtemp(prefix="ralph-mutate-")
    try:
        for module, tests in plan:
            summaries.append(mutate_module(module, tests, args, equivalent_table.get(module, {}), workdir))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if args.list:
        return 0
    print("\n== summary")
    below = False
    for summary in summaries:
        if "error" in summary:
            print(f"   {summary['module']}: {summary['error']}")
            below = True
            continue
        print(f"   {summary['module']}: {figure(summary, args.discount_equivalent)}"
              + (f" (a sample of {summary['total']})" if summary["run"] < summary["total"] else ""))
        below = below or percent(summary, args.discount_equivalent) < args.min
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(summaries, f, indent=1)
    return 1 if below else 0


if __name__ == "__main__":
    sys.exit(main())
