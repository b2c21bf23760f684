"""Named plug-ins that fail loudly: the one mechanism behind the backends, runtimes and
algorithms registries.

An entry is the object itself or a ``"module:attribute"`` path imported on first use, so
naming the Mininet backend or the Spark runtime costs nothing until a run asks for it.
``plugins`` are modules that register entries when imported; they are imported on the
first :meth:`Registry.names` or :meth:`Registry.get`, so importing one algorithm family
never pays for the others. It lives in the contract, the one package every registry's
user may import (the algorithms may not import ``emulator``), and imports nothing of the
project.

>>> colors = Registry("color", {"red": "colorsys:rgb_to_hsv"})
>>> colors.names()
['red']
>>> colors.get("red").__name__
'rgb_to_hsv'
>>> colors.get("blue")
Traceback (most recent call last):
...
ValueError: unknown color 'blue'; valid: red
>>> colors.register("red", "colorsys:hsv_to_rgb")
Traceback (most recent call last):
...
ValueError: color 'red' is registered twice
"""
from __future__ import annotations

import importlib


class Registry:
    """Names mapped to objects or ``"module:attribute"`` paths, filled by ``entries`` and
    by the ``plugins`` modules (imported lazily, each once)."""

    def __init__(self, kind: str, entries: dict | None = None, plugins: tuple = ()):
        self.kind = kind
        self._entries: dict = {}
        self._plugins = tuple(plugins)
        for name, entry in (entries or {}).items():
            self.register(name, entry)

    def register(self, name: str, entry):
        """Add ``name``; a second entry under the same name is an error. Returns ``entry``."""
        if name in self._entries:
            raise ValueError(f"{self.kind} {name!r} is registered twice")
        self._entries[name] = entry
        return entry

    def _load_plugins(self) -> None:
        pending, self._plugins = self._plugins, ()
        for i, module in enumerate(pending):
            try:
                importlib.import_module(module)
            except BaseException:
                self._plugins = pending[i:]  # a later call tries again and fails as loudly
                raise

    def names(self) -> list[str]:
        """The registered names, sorted."""
        self._load_plugins()
        return sorted(self._entries)

    def get(self, name: str):
        """The object registered as ``name``; an unknown name lists the valid ones."""
        self._load_plugins()
        try:
            entry = self._entries[name]
        except KeyError:
            raise ValueError(f"unknown {self.kind} {name!r}; valid: "
                             f"{', '.join(self.names())}") from None
        if isinstance(entry, str):
            module, _, attribute = entry.partition(":")
            entry = self._entries[name] = getattr(importlib.import_module(module), attribute)
        return entry
