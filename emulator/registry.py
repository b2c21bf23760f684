"""Named plug-ins that fail loudly: backends, runtimes (and the pattern for any other kind).

Entries are ``"module:attribute"`` paths imported on first use, so naming the Mininet
backend or the Spark runtime costs nothing until a run asks for it.

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
    """Names mapped to ``"module:attribute"`` paths (or to the objects themselves)."""

    def __init__(self, kind: str, entries: dict | None = None):
        self.kind = kind
        self._entries: dict = {}
        for name, entry in (entries or {}).items():
            self.register(name, entry)

    def register(self, name: str, entry) -> None:
        """Add ``name``; a second entry under the same name is an error."""
        if name in self._entries:
            raise ValueError(f"{self.kind} {name!r} is registered twice")
        self._entries[name] = entry

    def names(self) -> list[str]:
        """The registered names, sorted."""
        return sorted(self._entries)

    def get(self, name: str):
        """The object registered as ``name``; an unknown name lists the valid ones."""
        try:
            entry = self._entries[name]
        except KeyError:
            raise ValueError(f"unknown {self.kind} {name!r}; valid: "
                             f"{', '.join(self.names())}") from None
        if isinstance(entry, str):
            module, _, attribute = entry.partition(":")
            entry = self._entries[name] = getattr(importlib.import_module(module), attribute)
        return entry
