"""Hook calls load ralph's modules from one file instead of one file each.

A hook runs on every tool call, and the usual import of a module costs about
a tenth of a millisecond of finding, stat-ing, opening and reading files
before its code runs: twenty modules on a Bash PreToolUse call. So for hook
subcommands the launcher (bin/ralph) loads this module first, from its path
(no directory is listed for it), and it serves ralph's modules from a bundle
in ralph's __pycache__: one file per hook subcommand, holding each module's
bytecode (as the import system would compile it, less docstrings and the
annotations of function signatures, which nothing on a hook call reads) and
its source file's size and mtime.

A module is served from the bundle only while its source file still has that
size and mtime; any other module (a changed source, one the bundle lacks) is
imported the usual way, and at the end of such a call the bundle is written
again (temp file + rename) with what the call imported. Nothing depends on
the bundle: a missing, torn or unwritable one means the usual imports.
"""
import marshal
import posix
import sys

from _imp import _fix_co_filename

# importlib's machinery, loaded at start-up; posix, not ralph.fastos, so that
# fastos too is served from the bundle
_bootstrap = sys.modules["_frozen_importlib"]
PACKAGE_DIR = __file__.rpartition("/")[0]  # .../ralph
FORMAT = 1  # bumped when the entries' layout changes
MAX_MODULE_BYTES = 1 << 24  # past this, an index or a module's bytecode is damage, not ralph


def bundle_path(subcommand: str) -> str:
    return f"{PACKAGE_DIR}/__pycache__/hook-bundle.{subcommand}.{sys.implementation.cache_tag}.bin"


def is_ralph_module(name: str) -> bool:
    return name == "ralph" or name.startswith("ralph.")


def source_stamp(path: str) -> tuple[int, int]:
    info = posix.stat(path)
    return info.st_mtime_ns, info.st_size


class BundleFinder:
    """A meta path finder and loader for the modules of one bundle."""

    def __init__(self, path: str, fd: int, index: dict[str, tuple]) -> None:
        self.path = path
        self.fd = fd  # the bundle, open for the life of the process (-1: none)
        self.index = index  # module name -> (source path, is package, (mtime_ns, size), offset, length)
        self.loaded: dict[str, object] = {}  # module name -> its code, between find_spec and exec_module
        self.outdated = False  # a ralph module was imported the usual way: write the bundle again

    def find_spec(self, name: str, path: object = None, target: object = None) -> object:
        if not is_ralph_module(name):
            return None
        code = self.code(name)
        if code is None:
            self.outdated = True
            return None
        self.loaded[name] = code
        origin, is_package = self.index[name][:2]
        spec = _bootstrap.ModuleSpec(name, self, origin=origin, is_package=is_package)
        spec.has_location = True
        spec.cached = self.path  # where its bytecode came from (and the import system need not work out a .pyc path)
        if is_package:
            spec.submodule_search_locations = [origin.rpartition("/")[0]]
        return spec

    def code(self, name: str) -> object:
        """The module's code from the bundle, None unless the bundle has it
        for its source file as it is now."""
        entry = self.index.get(name)
        if entry is None:
            return None
        try:
            origin, _, stamp, offset, length = entry
            if source_stamp(origin) != stamp or not 0 < length <= MAX_MODULE_BYTES:
                return None
            code = marshal.loads(posix.pread(self.fd, length, offset))
            _fix_co_filename(code, origin)  # a TypeError unless it is a code object
        except Exception:  # a damaged bundle: the usual import (a crash here would be a hook that allows)
            return None
        return code

    def create_module(self, spec: object) -> None:
        return None  # the default module object

    def exec_module(self, module: object) -> None:
        exec(self.loaded.pop(module.__name__), module.__dict__)


def serve(subcommand: str) -> None:
    """Serve ralph's modules from the bundle of this hook subcommand (an empty
    one when there is none yet) for the rest of this process."""
    if not subcommand.replace("-", "").isalnum():
        return  # not a hook subcommand: no file named after it
    path = bundle_path(subcommand)
    fd, index = -1, {}
    try:
        fd = posix.open(path, posix.O_RDONLY | posix.O_CLOEXEC)
        head = posix.read(fd, 1 << 13)
        size = int.from_bytes(head[:4], "little")
        if len(head) < 4 + size <= MAX_MODULE_BYTES:
            head += posix.pread(fd, 4 + size - len(head), len(head))
        data = marshal.loads(head[4:4 + size])
        if isinstance(data, tuple) and len(data) == 2 and data[0] == FORMAT and isinstance(data[1], dict):
            index = data[1]
    except Exception:
        pass  # none yet, or not one of ours: the usual imports, and a new bundle at the end
    sys.meta_path.insert(0, BundleFinder(path, fd, index))


def update() -> None:
    """At the end of a hook call that imported ralph modules the usual way:
    write the bundle again (ralph.hook_bundle_write). Never raises: the
    answer went out already, and the next call may try again."""
    finder = next((f for f in sys.meta_path if isinstance(f, BundleFinder)), None)
    if finder is None or not finder.outdated:
        return
    try:
        from ralph.hook_bundle_write import write

        write(finder)
    except BaseException:
        pass  # atomic_write leaves no temp file behind
