"""Writing the hook bundle (see ralph.hook_bundle): only at the end of a
hook call that imported a ralph module the bundle lacks or holds outdated,
so no other call loads this code."""
import marshal
import posix
import sys

from ralph.hook_bundle import FORMAT, PACKAGE_DIR, BundleFinder, source_stamp
from ralph.project import atomic_write

_external = sys.modules["_frozen_importlib_external"]  # importlib's machinery, loaded at start-up


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
            # the bytecode the import system would use: the .pyc written for
            # this very source, else the source compiled as it compiles it
            code = _external.SourceFileLoader(name, found[0]).get_code(name)
            modules[name] = (*found, marshal.dumps(code))
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
    if not name.startswith("ralph.") or name == "ralph.hook_bundle":  # imported before it serves
        return None
    spec = getattr(module, "__spec__", None)
    origin = getattr(spec, "origin", None)
    if not isinstance(origin, str) or not origin.endswith(".py"):
        return None
    return origin, spec.submodule_search_locations is not None, source_stamp(origin)


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
