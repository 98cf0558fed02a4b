"""What the CLI's commands share: plain-text tables."""

from __future__ import annotations


def align_table(head: list[str], body: list[list[str]], *, left: int) -> str:
    """Rows of cells in columns: the first ``left`` columns flush left, the rest flush right.

    >>> print(align_table(["a", "n"], [["xy", "1"], ["z", "10"]], left=1), end="")
    a    n
    xy   1
    z   10
    """
    widths = [max(len(row[i]) for row in [head, *body]) for i in range(len(head))]
    lines = []
    for row in [head, *body]:
        cells = [c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines) + "\n"
