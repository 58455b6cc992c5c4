"""Locates the compiled extension ``ttt._ttt``.

Installed packages carry it next to this file. In a source checkout it is
found in the build tree: ``$TTT_BUILD_DIR/python/ttt`` (or ``build/`` at the
repository root), so ``python3 -c "import ttt"`` works from ``python/`` too.
"""

from __future__ import annotations

import glob
import importlib.machinery
import importlib.util
import os
import sys
from types import ModuleType

_module: ModuleType | None = None


def _candidates() -> list[str]:
    dirs = []
    build = os.environ.get("TTT_BUILD_DIR")
    if build:
        dirs.append(os.path.join(build, "python", "ttt"))
    here = os.path.dirname(os.path.abspath(__file__))
    dirs.append(os.path.join(here, "..", "..", "build", "python", "ttt"))
    found = []
    for d in dirs:
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            found.extend(glob.glob(os.path.join(d, "_ttt" + suffix)))
    return found


def load() -> ModuleType:
    """Returns the extension module, importing it on first use; raises
    ImportError with the way to build it if it is not there."""
    global _module
    if _module is not None:
        return _module
    first_error: ImportError | None = None
    # Only an extension that is there but does not load is an error here; a
    # missing one (a source checkout) is looked for in the build tree. The
    # ImportError of `from . import _ttt` names the package, not the module,
    # so it cannot tell the two apart.
    if importlib.util.find_spec(f"{__package__}._ttt") is not None:
        try:
            from . import _ttt  # type: ignore[attr-defined]

            _module = _ttt
            return _module
        except ImportError as e:
            first_error = e
    for path in _candidates():
        spec = importlib.util.spec_from_file_location("ttt._ttt", path)
        if spec is None or spec.loader is None:
            continue
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules["ttt._ttt"] = module
        _module = module
        return module
    if first_error is not None:
        raise ImportError(f"ttt: cannot load the extension ttt._ttt: {first_error}")
    raise ImportError(
        "ttt: the compiled extension ttt._ttt is missing: install the package "
        "(pip install .) or build it (make python) and set TTT_BUILD_DIR to "
        "the build directory")


def available() -> bool:
    """True if the extension can be loaded."""
    try:
        load()
        return True
    except ImportError:
        return False
