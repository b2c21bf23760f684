"""Sections of a Markdown page that several scripts write: each owns the ``## `` sections
it generates, and keeps the others as they are.

A section runs from its ``## `` heading line to the next ``## `` heading (or the end).

>>> page = "# T\\n\\n## A\\n\\nold\\n\\n## B\\n\\nb\\n"
>>> print(with_section(page, "## A", "## A\\n\\nnew\\n"), end="")
# T
<BLANKLINE>
## A
<BLANKLINE>
new
<BLANKLINE>
## B
<BLANKLINE>
b
>>> carry_over(page, "# T\\n\\n## B\\n\\nb2\\n") == "# T\\n\\n## B\\n\\nb2\\n\\n## A\\n\\nold\\n"
True
"""
from __future__ import annotations


def _split(text: str) -> tuple[str, list[tuple[str, str]]]:
    """The text before the first ``## `` heading, and each section as (heading, text)."""
    head, sections = [], []
    for line in text.splitlines(keepends=True):
        if line.startswith("## "):
            sections.append((line.rstrip("\n"), [line]))
        elif sections:
            sections[-1][1].append(line)
        else:
            head.append(line)
    return "".join(head), [(title, "".join(lines)) for title, lines in sections]


def _join(head: str, sections: list[tuple[str, str]]) -> str:
    parts = [head.rstrip("\n")] if head.strip() else []
    parts += [body.rstrip("\n") for _, body in sections]
    return "\n\n".join(parts) + "\n"


def with_section(text: str, heading: str, body: str) -> str:
    """``text`` with the section under ``heading`` replaced by ``body`` (which starts
    with that heading), or ``body`` appended when there is none."""
    head, sections = _split(text)
    if heading in [title for title, _ in sections]:
        sections = [(title, body if title == heading else old) for title, old in sections]
    else:
        sections.append((heading, body))
    return _join(head, sections)


def carry_over(old: str, new: str) -> str:
    """``new`` with every section of ``old`` whose heading ``new`` lacks appended, in
    ``old``'s order: what other scripts wrote survives a page rewritten whole."""
    _, old_sections = _split(old)
    head, sections = _split(new)
    have = {title for title, _ in sections}
    return _join(head, sections + [(t, body) for t, body in old_sections if t not in have])
