"""How tokens are built: parents, merge trees down to bytes, and merge traces.

Rank-rule vocabularies (``.tiktoken`` files) store no merges, only ranks. A token's parents
are recovered by running BPE on its own bytes with only the merges of lower rank allowed:
if that ends in exactly two parts, they are the parents. A token for which it does not is
*unbuildable*: the encoder can still emit it (tiktoken looks whole pieces up first), but no
chain of merges leads to it. Such tokens are flagged, never hidden.

>>> from bpeinspect.core import load_tokenizer
>>> tok = load_tokenizer("gpt2")
>>> g = tok.merge_graph
>>> [tok.token_bytes(i) for i in g.parents(tok.encode(" hello")[0])]
[b' hell', b'o']
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from bpeinspect.core.bpe import rank_bounds
from bpeinspect.core.errors import Cancelled
from bpeinspect.core.text import fix_surrogates


class MergeSource(Protocol):
    """What merge graphs and traces read from a tokenizer (a
    :class:`~bpeinspect.core.tokenizer.Tokenizer` is one)."""

    @property
    def uses_rank_rule(self) -> bool: ...

    @property
    def explicit_merges(self) -> Sequence[tuple[int, int]] | None: ...

    @property
    def ranks(self) -> Mapping[bytes, int]: ...

    def ids(self) -> list[int]: ...

    def token_bytes(self, token_id: int) -> bytes: ...

    def is_special(self, token_id: int) -> bool: ...

    def is_added(self, token_id: int) -> bool: ...

    def merge_rank(self, left: int, right: int) -> int | None: ...

    def merge_result(self, left: int, right: int) -> int | None: ...

    def initial_parts(self, piece: bytes) -> list[int]: ...

    def encode_piece(self, piece: str | bytes) -> list[int]: ...


@dataclass(frozen=True, eq=False, repr=False)
class MergeNode:
    """A token in a merge tree; ``left``/``right`` are ``None`` for single bytes and specials.

    ``repeats`` marks a token that already appears above it in the tree, left unexpanded: a
    merge that makes one of its own parts (``"" + "a" -> "a"``, with the empty token some
    files hold). Every walk of a tree is iterative: real chains run thousands of merges deep.
    """

    id: int
    token: bytes
    rank: int | None
    left: MergeNode | None = None
    right: MergeNode | None = None
    buildable: bool = True
    repeats: bool = False

    def leaves(self) -> list[int]:
        """The byte tokens at the bottom of the tree, left to right."""
        return [n.id for _, n in iter_tree(self) if n.left is None or n.right is None]

    def depth(self) -> int:
        return max(d for d, _ in iter_tree(self))

    def __repr__(self) -> str:  # the children by id: a recursive repr fails on deep trees
        kids = "" if self.left is None or self.right is None else f", left={self.left.id}, right={self.right.id}"
        return f"MergeNode(id={self.id}, token={self.token!r}, rank={self.rank}{kids})"


@dataclass(frozen=True)
class MergeStep:
    """One merge while encoding a pre-token."""

    step: int
    position: int  # index of the left part before the merge
    left: int
    right: int
    result: int
    rank: int
    parts: tuple[int, ...]  # the token ids after this merge


@dataclass
class Trace:
    """The merges that turn one pre-token's bytes into tokens."""

    piece: bytes
    initial: tuple[int, ...]
    steps: list[MergeStep] = field(default_factory=list)
    # tiktoken-style encoders look a whole piece up before merging; True if that lookup
    # gives something other than the merges would
    shortcut: bool = False
    result: tuple[int, ...] = ()


class MergeGraph:
    """Parents and children of every token of one tokenizer, computed lazily."""

    def __init__(self, tok: MergeSource) -> None:
        # A proxy, not a reference: the tokenizer holds its graph, and a cycle between them
        # would leave a closed tokenizer to the cyclic collector (or, frozen, keep it for ever).
        self.tok = weakref.proxy(tok)
        self._parents: dict[int, tuple[int, int] | None] = {}
        self._unbuildable: set[int] = set()
        self._children: dict[int, list[int]] | None = None
        self._complete = False
        explicit = tok.explicit_merges
        if explicit is not None:  # the pair rule: the listed merges are all there is
            for a, b in explicit:
                new = tok.merge_result(a, b)
                if new is not None and new not in self._parents:
                    self._parents[new] = (a, b)

    # -- parents --------------------------------------------------------------------------------

    def parents(self, token_id: int) -> tuple[int, int] | None:
        """The two tokens merged to make ``token_id``; ``None`` for bytes, specials and unbuildable
        tokens without any split (see :meth:`is_buildable`)."""
        try:
            return self._parents[token_id]
        except KeyError:
            return self._compute(token_id)

    def is_buildable(self, token_id: int) -> bool:
        """False for a multi-byte token that no chain of merges produces."""
        self.parents(token_id)
        return token_id not in self._unbuildable

    def _compute(self, token_id: int) -> tuple[int, int] | None:
        tok = self.tok
        bts = tok.token_bytes(token_id)
        result: tuple[int, int] | None = None
        if tok.is_special(token_id) or tok.is_added(token_id) or len(bts) < 2:
            result = None
        elif tok.uses_rank_rule:
            ranks = tok.ranks
            bounds = rank_bounds(bts, ranks, max_rank=token_id)
            if len(bounds) == 3:
                result = (ranks[bts[: bounds[1]]], ranks[bts[bounds[1] :]])
            else:
                self._unbuildable.add(token_id)
                result = best_split(bts, ranks)
        else:
            # pair rule: only the listed merges exist, and they were all read in __init__
            self._unbuildable.add(token_id)
            result = best_split(bts, tok.ranks)
        self._parents[token_id] = result
        return result

    def compute_all(
        self,
        *,
        progress: Callable[[int, int], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> None:
        """Work out every token's parents (seconds for a 200k vocabulary; run it in a worker)."""
        if self._complete:
            return
        ids = self.tok.ids()
        for n, i in enumerate(ids):
            if i not in self._parents:
                self._compute(i)
            if not n & 127:  # every millisecond or so: a GUI's worker gives way to the window at each check
                if should_stop is not None and should_stop():
                    raise Cancelled()
                if progress is not None:
                    progress(n, len(ids))
        if progress is not None:
            progress(len(ids), len(ids))
        self._complete = True

    def unbuildable(self) -> list[int]:
        """Multi-byte tokens no chain of merges produces (computes every token's parents)."""
        self.compute_all()
        return sorted(self._unbuildable)

    def merge_list(self) -> list[tuple[int, int]]:
        """``(left, right)`` for every multi-byte token in id order, with best splits for unbuildable ones."""
        self.compute_all()
        out = []
        for i in self.tok.ids():
            p = self._parents.get(i)
            if p is not None:
                out.append(p)
        return out

    # -- children and trees ----------------------------------------------------------------------

    def children(self, token_id: int) -> list[int]:
        """Tokens that have ``token_id`` as one of their two parents, ascending."""
        if self._children is None:
            self.index_children()
        assert self._children is not None  # index_children fills it
        return list(self._children.get(token_id, ()))

    def index_children(self, *, should_stop: Callable[[], bool] | None = None) -> None:
        """Build the children index :meth:`children` reads (computes every token's parents).

        ``should_stop`` is called every few thousand tokens, as in :meth:`compute_all`: a 200k
        vocabulary's index is a long Python loop, and a GUI's worker gives way to
        the window at each check (without one, the GUI thread waits for the interpreter lock)."""
        if self._children is not None:
            return
        self.compute_all(should_stop=should_stop)

        def check(n: int) -> None:
            if not n & 2047 and should_stop is not None and should_stop():
                raise Cancelled()

        kids: dict[int, list[int]] = {}
        unbuildable = self._unbuildable
        for n, (t, p) in enumerate(self._parents.items()):
            if p is not None and t not in unbuildable:
                kids.setdefault(p[0], []).append(t)
                if p[1] != p[0]:
                    kids.setdefault(p[1], []).append(t)
            check(n)
        for n, v in enumerate(kids.values()):
            v.sort()
            check(n)
        self._children = kids

    def tree(self, token_id: int) -> MergeNode:
        """The merge tree of ``token_id`` down to its bytes (built without recursion)."""
        tok = self.tok

        def node(i: int, kids: list[MergeNode], repeats: bool = False) -> MergeNode:
            rank = self.rank(i)  # computes the parents, and so whether the token is buildable
            left, right = kids if kids else (None, None)
            return MergeNode(i, tok.token_bytes(i), rank, left, right, i not in self._unbuildable, repeats)

        # frames of [id, its parents' ids, the children built so far]; on_path catches cycles
        stack: list[tuple[int, tuple[int, ...], list[MergeNode]]] = [(token_id, self.parents(token_id) or (), [])]
        on_path = {token_id}
        while True:
            i, parents, built = stack[-1]
            if len(built) < len(parents):
                k = parents[len(built)]
                if k in on_path:
                    built.append(node(k, [], repeats=True))
                else:
                    stack.append((k, self.parents(k) or (), []))
                    on_path.add(k)
                continue
            stack.pop()
            on_path.discard(i)
            done = node(i, built)
            if not stack:
                return done
            stack[-1][2].append(done)

    def rank(self, token_id: int) -> int | None:
        """The merge rank of the merge that makes ``token_id`` (``None`` for bytes, special and
        added tokens)."""
        tok = self.tok
        if tok.is_special(token_id) or tok.is_added(token_id) or len(tok.token_bytes(token_id)) < 2:
            return None
        if tok.uses_rank_rule:
            return token_id
        p = self.parents(token_id)
        if p is None or token_id in self._unbuildable:
            return None
        return tok.merge_rank(*p)


def best_split(bts: Any, ranks: Mapping[Any, int]) -> tuple[int, int] | None:
    """The split of ``bts`` (bytes, or a piece's text) into two existing tokens whose later part
    was made earliest."""
    best: tuple[int, int] | None = None
    best_key = None
    for k in range(1, len(bts)):
        a, b = ranks.get(bts[:k]), ranks.get(bts[k:])
        if a is not None and b is not None:
            key = max(a, b)
            if best_key is None or key < best_key:
                best, best_key = (a, b), key
    return best


def trace(tok: MergeSource, piece: str | bytes) -> Trace:
    """Replay how ``tok`` merges one pre-token, one merge at a time.

    >>> from bpeinspect.core import load_tokenizer
    >>> tok = load_tokenizer("gpt2")
    >>> t = trace(tok, "hello")
    >>> len(t.initial), len(t.steps), t.result == tuple(tok.encode("hello"))
    (5, 4, True)
    """
    if isinstance(piece, str):
        piece = fix_surrogates(piece).encode("utf-8")
    parts = tok.initial_parts(piece)
    tr = Trace(piece=piece, initial=tuple(parts))
    steps = tr.steps
    while len(parts) > 1:
        best = None
        for i in range(len(parts) - 1):
            r = tok.merge_rank(parts[i], parts[i + 1])
            if r is not None and (best is None or r < best[0]):
                best = (r, i)
        if best is None:
            break
        r, i = best
        left, right = parts[i], parts[i + 1]
        new = tok.merge_result(left, right)
        assert new is not None
        parts[i : i + 2] = [new]
        steps.append(MergeStep(len(steps), i, left, right, new, r, tuple(parts)))
    tr.result = tuple(parts)
    actual = tuple(tok.encode_piece(piece))
    if actual != tr.result:
        tr.shortcut = True
        tr.result = actual
    return tr


def iter_tree(node: MergeNode, depth: int = 0) -> Iterator[tuple[int, MergeNode]]:
    """Pre-order walk of a merge tree as ``(depth, node)`` (iterative: trees run deep)."""
    stack = [(depth, node)]
    while stack:
        d, n = stack.pop()
        yield d, n
        if n.left is not None and n.right is not None:
            stack.append((d + 1, n.right))
            stack.append((d + 1, n.left))
