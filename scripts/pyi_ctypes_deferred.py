# Appended by build.spec to PyInstaller's own loader/pyimod03_ctypes.py (the
# bootstrap module whose install() makes ctypes.CDLL & co. look in
# sys._MEIPASS first) in place of that module. PyInstaller's install()
# imports ctypes on every start of the binary: dlopen of _ctypes and libffi,
# about 4 ms of a 17 ms hook call, for hooks that never touch ctypes. This
# install() applies the very same hooks when ctypes is first imported, if
# ever. It runs during bootstrap: only sys is imported.

_install_now = install  # noqa: F821 (PyInstaller's install(), above)


class _HooksAfterExec:
    """ctypes' own loader, and PyInstaller's hooks once ctypes has run."""

    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        # the module keeps its real loader (resources, get_code, reloads)
        module.__loader__ = module.__spec__.loader = self.loader
        self.loader.exec_module(module)
        _install_now()


class _CtypesFinder:
    """First on sys.meta_path until ctypes is imported: finds it with the
    other finders and wraps its loader."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name != "ctypes":
            return None
        sys.meta_path.remove(_CtypesFinder)
        for finder in sys.meta_path:
            find_spec = getattr(finder, "find_spec", None)
            spec = find_spec(name, path, target) if find_spec else None
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = _HooksAfterExec(spec.loader)
                return spec
        return None


def install():
    if "ctypes" in sys.modules:  # already imported (on macOS, by the module above)
        _install_now()
    else:
        sys.meta_path.insert(0, _CtypesFinder)
