"""One mutation operator per file; importing this package registers them all.

To add a sabotage, write a file here with one function decorated by `@operator` (see
grader/sabotage/mutate.py and docs/authoring.md); its docstring is the misconception.
"""

from __future__ import annotations

import importlib
import pkgutil

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
