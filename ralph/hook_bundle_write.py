"""Writing the hook bundle (see ralph.hook_bundle): only at the end of a
hook call that imported a ralph module the bundle lacks or holds outdated,
so no other call loads this code."""
import _ast
import marshal
import posix
import sys

from ralph.hook_bundle import FORMAT, PACKAGE_DIR, BundleFinder, is_ralph_module, source_stamp
from ralph.project import atomic_write


def write(finder: BundleFinder) -> None:
    """Write the bundle again with every ralph module this call imported, and
    those of earlier calls whose source is unchanged (calls of one subcommand
    import different modules: an Edit is not a Bash call)."""
    if not _writable(finder.path.rpartition("/")[0]):
        return
    modules = {}  # name -> (source path, is package, stamp, bytecode)
    changed = False
    for name in finder.index:
        code = finder.code(name)  # None unless sound and its source unchanged
        if code is None:
            changed = True
        else:
            modules[name] = (*finder.index[name][:3], marshal.dumps(code))
    for name, module in list(sys.modules.items()):
        found = _module_source(name, module)
        if found is not None and (name not in modules or modules[name][:3] != found):
            modules[name] = (*found, marshal.dumps(_compile(found[0])))
            changed = True
    if changed:  # else what the bundle lacks cannot be in it (not from a .py file)
        atomic_write(finder.path, _bundle(modules), fsync=False)  # a cache: losing it to a crash costs one rewrite


def _writable(cache_dir: str) -> bool:
    """Can the bundle be written? (A system-wide install run by a user cannot:
    then every call would build it in vain.)"""
    if posix.access(cache_dir, posix.W_OK | posix.X_OK):
        return True
    # no __pycache__ yet: can it be made?
    return not posix.access(cache_dir, posix.F_OK) and posix.access(PACKAGE_DIR, posix.W_OK | posix.X_OK)


def _module_source(name: str, module: object) -> tuple | None:
    """(source path, is package, stamp) of an imported ralph module loaded
    from a .py file; None for anything else."""
    if not is_ralph_module(name) or name == "ralph.hook_bundle":  # imported before it serves
        return None
    spec = getattr(module, "__spec__", None)
    origin = getattr(spec, "origin", None)
    if not isinstance(origin, str) or not origin.endswith(".py"):
        return None
    return origin, spec.submodule_search_locations is not None, source_stamp(origin)


def _compile(path: str) -> object:
    """The module's code as the import system compiles it (same file name,
    same line numbers), less what nothing on a hook call reads and every call
    would pay for: docstrings (unmarshalled) and the annotations of function
    signatures (evaluated at each `def`); variable annotations stay (a class
    body's may declare fields). About 15% of the bytecode of a Bash call."""
    with open(path, "rb") as f:
        tree = compile(f.read(), path, "exec", _ast.PyCF_ONLY_AST, dont_inherit=True)
    _strip(tree)
    return compile(tree, path, "exec", dont_inherit=True)


def _strip(node: object) -> None:
    # _ast, not ast: ast imports os and a dozen more modules
    for field in node._fields:
        value = getattr(node, field, None)
        for child in value if isinstance(value, list) else (value,):
            if isinstance(child, _ast.AST):
                _strip(child)
    if isinstance(node, (_ast.FunctionDef, _ast.AsyncFunctionDef)):
        node.returns = None
        arguments = node.args
        for argument in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg):
            if argument is not None:
                argument.annotation = None
    if isinstance(node, (_ast.Module, _ast.ClassDef, _ast.FunctionDef, _ast.AsyncFunctionDef)) and node.body:
        first = node.body[0]
        if isinstance(first, _ast.Expr) and isinstance(first.value, _ast.Constant) and isinstance(first.value.value, str):
            if len(node.body) > 1:
                del node.body[0]
            else:  # a body must say something
                node.body[0] = _ast.Pass(lineno=first.lineno, col_offset=first.col_offset,
                                         end_lineno=first.end_lineno, end_col_offset=first.end_col_offset)


def _bundle(modules: dict[str, tuple]) -> bytes:
    """The bundle's bytes: the index's length (4 bytes), the index, then each
    module's bytecode at the offset the index gives."""
    # offsets depend on the index's size, which depends on the offsets' sizes:
    # fix them with room to spare (marshal writes each int in 4 or 5 bytes)
    start = 4 + len(marshal.dumps((FORMAT, {name: (*entry[:3], 1 << 40, 1 << 40) for name, entry in modules.items()}))) + 64
    index, offset = {}, start
    for name, (origin, is_package, stamp, bytecode) in modules.items():
        index[name] = (origin, is_package, stamp, offset, len(bytecode))
        offset += len(bytecode)
    head = marshal.dumps((FORMAT, index))
    if 4 + len(head) > start:
        raise ValueError("bundle index larger than reserved")
    return len(head).to_bytes(4, "little") + head + b"\0" * (start - 4 - len(head)) + b"".join(entry[3] for entry in modules.values())
