"""Numba's on-disk cache of our compiled code, kept fresh when a file it was compiled from changes.

numba (``cache=True``) stamps a cached function with its own source file only, yet the compiled
code also holds the functions it calls from other files and the module constants it reads
(``constants.POINTS_PER_TRICK``, ``cards.CARD_SUIT``), frozen at compile time (numba issue #1833). Edit
one of those and the cache would go on running the old code, silently.

Importing this module (``wizard_env/__init__`` does, before any compiled function is declared)
puts ``ProjectSourceLocator`` ahead of numba's own cache locators for the files of this project.
It keeps the directory numba would choose (``NUMBA_CACHE_DIR``, ``__pycache__``, the user's cache)
and adds to numba's stamp the contents of every project module the function's file imports,
directly or through another project module. A change in any of them recompiles the function on
its next call; a change elsewhere (the CLI, the envs' wrappers) does not.

Where numba finds no writable directory (a read-only install in a container whose user has no
writable home), numba alone would make ``import wizard_env`` fail ("cannot cache function ...: no
locator available"). The locator then caches in a directory of the user's own under the system's
temporary directory (``fallback_cache_dir``), with one ``CacheFallbackWarning`` a process naming it
and ``NUMBA_CACHE_DIR``, the way to choose another.

It rests on numba's private list ``numba.core.caching.CacheImpl._locator_classes``: without it the
locator is not installed and numba's own stamps apply (``STAMPS_INSTALLED`` says which, and a test
fails). It subclasses numba's private base class of locators where there is one.
"""

from __future__ import annotations

import ast
import atexit
import functools
import hashlib
import importlib.util
import os
import shutil
import stat
import tempfile
import warnings
from pathlib import Path

from numba.core import caching

#: The top-level package whose modules the stamps follow.
PROJECT = __name__.split(".")[0]


@functools.lru_cache(maxsize=None)
def _digest(path: str, mtime_ns: int, size: int) -> str:
    """SHA-256 of a file's bytes (memoized on its modification time and size)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def module_file(name: str) -> str | None:
    """The source file of module ``name`` of this project (None for another package, a namespace or no module)."""
    if name != PROJECT and not name.startswith(PROJECT + "."):
        return None
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    origin = spec.origin if spec is not None else None
    return origin if origin is not None and origin.endswith(".py") else None


@functools.lru_cache(maxsize=None)
def imported_modules(path: str, module: str) -> tuple[str, ...]:
    """Names of the project modules that the file ``path`` of module ``module`` imports itself."""
    package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    try:
        tree = ast.parse(Path(path).read_bytes(), path)
    except (OSError, SyntaxError, ValueError):  # not a readable file (in a zip archive, say): numba's stamp alone
        return ()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = importlib.util.resolve_name("." * node.level + (node.module or ""), package) if node.level else node.module
            if not base:
                continue
            for alias in node.names:
                submodule = f"{base}.{alias.name}"  # `from package import module` reads the module, not the package
                names.add(submodule if module_file(submodule) is not None else base)
    return tuple(sorted(name for name in names if module_file(name) is not None))


@functools.lru_cache(maxsize=None)
def dependencies(path: str, module: str) -> tuple[tuple[str, str], ...]:
    """(module name, file) of the project modules ``path`` (module ``module``) imports, directly or through others."""
    found: dict[str, str] = {}
    todo = [(path, module)]
    while todo:
        file, name = todo.pop()
        for imported in imported_modules(file, name):
            source = module_file(imported)
            if imported not in found and imported != module and source is not None:
                found[imported] = source
                todo.append((source, imported))
    return tuple(sorted(found.items()))


def dependency_stamp(path: str, module: str) -> tuple[tuple[str, str], ...]:
    """(module name, SHA-256 of its file) of each of ``dependencies``, sorted by name."""
    stamp = []
    for name, source in dependencies(path, module):
        try:
            st = os.stat(source)
            stamp.append((name, _digest(source, st.st_mtime_ns, st.st_size)))
        except OSError:
            stamp.append((name, "unreadable"))
    return tuple(stamp)


#: numba's base class of cache locators (private today; a rename must not break ``import wizard_env``).
_LOCATOR_BASE: type = getattr(caching, "CacheLocator", None) or getattr(caching, "_CacheLocator", None) or object


class CacheFallbackWarning(UserWarning):
    """None of the places numba caches compiled code in is writable: a temporary directory is used instead."""


def private_cache_dir(base: str) -> str | None:
    """A directory for numba's cache under ``base`` that only this user can write, or None if ``base`` allows none.

    ``base``/wizard_env-numba-cache-UID, made with mode 0700, is kept between processes. Where that name holds
    anything else (a link, a file, a directory of another user's or one that others can write), it is left
    alone, and a new directory of this process's own is made beside it and removed at exit.
    """
    uid = os.getuid() if hasattr(os, "getuid") else 0
    path = os.path.join(base, f"{PROJECT}-numba-cache-{uid}")
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return None
    try:
        st = os.lstat(path)
        if stat.S_ISDIR(st.st_mode) and st.st_uid == uid and not st.st_mode & 0o022:
            tempfile.TemporaryFile(dir=path).close()  # writable (as numba's locators check)
            return path
        own = tempfile.mkdtemp(prefix=f"{PROJECT}-numba-cache-", dir=base)
    except OSError:
        return None
    atexit.register(shutil.rmtree, own, ignore_errors=True)
    return own


@functools.lru_cache(maxsize=None)
def fallback_cache_dir() -> str | None:
    """``private_cache_dir`` of the system's temporary directory (None if there is none), warned of once."""
    try:
        path = private_cache_dir(tempfile.gettempdir())
    except OSError:  # no writable temporary directory at all (FileNotFoundError)
        return None
    if path is not None:
        warnings.warn(f"{PROJECT}: numba finds no writable place for its cache of compiled code (the package's "
                      f"__pycache__, NUMBA_CACHE_DIR, the user's cache directory), so it is kept in {path}; set "
                      f"NUMBA_CACHE_DIR to a writable directory to choose one", CacheFallbackWarning, stacklevel=2)
    return path


class TemporaryCacheLocator(_LOCATOR_BASE):
    """numba's cache of one project file in ``fallback_cache_dir``, stamped with the file's contents."""

    def __init__(self, py_func, py_file: str, root: str):
        self._py_file, self._lineno = py_file, py_func.__code__.co_firstlineno
        folder = os.path.dirname(os.path.abspath(py_file))
        name = f"{os.path.basename(folder)}_{hashlib.sha1(folder.encode()).hexdigest()}"  # as numba names them
        self._path = os.path.join(root, name)

    def ensure_cache_path(self) -> None:
        os.makedirs(self._path, exist_ok=True)
        tempfile.TemporaryFile(dir=self._path).close()

    def get_cache_path(self) -> str:
        return self._path

    def get_source_stamp(self) -> object:
        st = os.stat(self._py_file)
        return _digest(self._py_file, st.st_mtime_ns, st.st_size)

    def get_disambiguator(self) -> str:
        return str(self._lineno)

    @classmethod
    def from_function(cls, py_func, py_file: str):
        root = fallback_cache_dir()
        if root is None or not os.path.exists(py_file):
            return None
        locator = cls(py_func, py_file, root)
        try:
            locator.ensure_cache_path()
        except OSError:
            return None
        return locator


class ProjectSourceLocator(_LOCATOR_BASE):
    """numba's own choice of cache directory for a project file, with a stamp that covers its imports too."""

    def __init__(self, inner, py_file: str, module: str):
        self._inner, self._py_file, self._module = inner, py_file, module

    def ensure_cache_path(self) -> None:
        self._inner.ensure_cache_path()

    def get_cache_path(self) -> str:
        return self._inner.get_cache_path()

    def get_source_stamp(self) -> object:
        return self._inner.get_source_stamp(), dependency_stamp(self._py_file, self._module)

    def get_disambiguator(self) -> str:
        return self._inner.get_disambiguator()

    @classmethod
    def from_function(cls, py_func, py_file: str):
        """A locator for a compiled function of this project (None for anyone else's: numba's locators take it)."""
        module = getattr(py_func, "__module__", None) or ""
        if module_file(module) is None:
            return None
        for other in [*NUMBA_LOCATORS, TemporaryCacheLocator]:
            inner = other.from_function(py_func, py_file)
            if inner is not None:
                return cls(inner, py_file, module)
        return None


_impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)  # CacheImpl in recent numba
_locators = getattr(_impl, "_locator_classes", None)
#: numba's own locators, in its order of preference (without one of ours from an earlier import of this module).
NUMBA_LOCATORS = [c for c in _locators or () if c.__qualname__ != ProjectSourceLocator.__qualname__]
#: Whether the locator is installed (numba's private list of locators was found).
STAMPS_INSTALLED = isinstance(_locators, list)
if isinstance(_locators, list):
    _locators[:] = [ProjectSourceLocator, *NUMBA_LOCATORS]
