"""The merge loop of BPE training, kept apart from the API because it is all about speed.

Data layout (pure Python, so every layer of indirection costs):

* A word (distinct pre-token) is a ``str`` whose characters are token ids (``chr(id)``).
  Merging pair ``ab`` into ``X`` is then ``word.split(ab)`` / ``X.join(...)`` in C, with
  exactly BPE's leftmost, non-overlapping semantics, and a pair is a 2-character ``str``,
  a cheap dict key and a substring at once.
* ``pair_counts``: pair -> weighted number of occurrences (overlapping windows, as minbpe
  and Hugging Face count them).
* ``where``: pair -> list of indices of the words it occurs in, ascending; entries go stale
  when a merge removes the pair from a word and are skipped (``pair in word``) when read.
* A heap of plain ints with lazy invalidation: an entry encodes (count, tie-break, pair);
  a popped entry whose count is out of date is pushed again with the current count.

Counts only ever fall (a merge creates pairs with the *new* token only), which is what
makes the lazy heap exact. (In "hf" mode a merge may re-make an existing token, as Hugging
Face allows; the pairs it then gains are pushed again with their higher counts.) The same monotony makes minbpe's tie-break cheap: among pairs
with the top count, minbpe takes the one that occurs first in the partly merged corpus,
i.e. the one whose first word (in first-seen order) comes first and, in that word, whose
first occurrence comes first. A pair's first word only moves later, so it sits in the
heap key; the position inside the word is compared only among the (few) exact ties.

Hugging Face's ``BpeTrainer`` breaks ties by the smaller pair of its own ids, whose byte
ids are ordered by the byte-level alphabet's characters; in "hf" mode our internal ids
*are* that order, so the pair itself is the tie-break.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from heapq import heapify, heappop, heappush
from operator import add

ID_BITS = 21  # internal ids are code points, so below 2**21
_ID_MASK = (1 << ID_BITS) - 1
MAX_ID = 0x10FFFE  # the largest code point but one
_SEP = chr(0x10FFFF)  # never a token: joins words when pairs are counted all at once
_PAIR_BITS = 2 * ID_BITS
LONG_WORD = 512  # pre-tokens longer than this (in bytes) are cut into segments
SEGMENT = 64


def _byte_level_chars() -> dict[str, int]:
    """GPT-2's byte-level alphabet: character -> byte."""
    printable = [*range(33, 127), *range(161, 173), *range(174, 256)]
    others = [b for b in range(256) if b not in printable]
    return {chr(b): b for b in printable} | {chr(256 + i): b for i, b in enumerate(others)}


BYTE_LEVEL_CHARS = _byte_level_chars()
HF_BYTE_ORDER = [BYTE_LEVEL_CHARS[c] for c in sorted(BYTE_LEVEL_CHARS)]  # Hugging Face's alphabet order


@dataclass(frozen=True)
class HFVocabulary:
    """The ids Hugging Face's ``BpeTrainer`` starts with: the special tokens get ``0..k-1`` in
    their order, then each byte-level character in code point order the next free id. A special
    token whose text is a byte-level string (``"ab"``, ``"a"``) *is* that string in the trainer's
    vocabulary: the byte, or a merge that makes those bytes later, takes the special's id.

    >>> v = HFVocabulary.of(["a", "<|x|>", "▁y"])
    >>> v.byte_ids[ord("a")], v.byte_ids[ord("!")], v.size
    (0, 3, 258)
    """

    byte_ids: tuple[int, ...]  # byte -> id
    token_bytes: tuple[bytes, ...]  # id -> bytes (a special's UTF-8 text for a special-only id)
    known: dict  # bytes that are tokens, or would take a special's id when made -> id
    size: int  # len(token_bytes): the next new token's id

    @classmethod
    def of(cls, specials: Sequence[str]) -> HFVocabulary:
        token_bytes: list[bytes] = []
        known: dict[bytes, int] = {}
        for i, s in enumerate(specials):
            as_bytes = hf_special_bytes(s)
            token_bytes.append(s.encode("utf-8") if as_bytes is None else as_bytes)
            if as_bytes is not None:
                known.setdefault(as_bytes, i)
        byte_ids = [0] * 256
        for b in HF_BYTE_ORDER:
            t = bytes([b])
            got = known.get(t)
            if got is None:
                got = known[t] = len(token_bytes)
                token_bytes.append(t)
            byte_ids[b] = got
        return cls(tuple(byte_ids), tuple(token_bytes), known, len(token_bytes))


def hf_special_bytes(special: str) -> bytes | None:
    """The token bytes a special token's text names in Hugging Face's byte-level vocabulary
    (``None`` if it names none). Raises ``ValueError`` if those differ from its own UTF-8 bytes:
    Hugging Face would then give a byte sequence and a different text one id.

    >>> hf_special_bytes("<|endoftext|>"), hf_special_bytes("a b")
    (b'<|endoftext|>', None)
    """
    try:
        as_bytes = bytes(BYTE_LEVEL_CHARS[c] for c in special)
    except KeyError:
        return None
    if as_bytes != special.encode("utf-8"):
        raise ValueError(
            f"special token {special!r} is also how Hugging Face writes the bytes {as_bytes!r} in its vocabulary, "
            "so with tie_break='hf' both would get one id; choose another text, or use tie_break='first-seen'"
        )
    return as_bytes


class MergeEngine:
    """Incremental BPE merges over a pre-token count table.

    ``table`` maps pre-token bytes to counts in first-seen order. ``step()`` performs one
    merge and returns ``(left, right, new, count)`` in internal ids, or ``None`` when no pair
    is left. Internal ids: with "first-seen", bytes are ``0..255`` and merged tokens ``256,
    257, ...``; with "hf" they are Hugging Face's own (:class:`HFVocabulary`: the special
    tokens first, the bytes in its alphabet's order, a merge that makes existing bytes keeps
    their id), so its tie-break, the smaller pair of ids, is the pair itself.
    """

    def __init__(self, table: dict[bytes, int], tie_break: str, special_tokens: Sequence[str] = ()) -> None:
        self.hf = tie_break == "hf"
        if self.hf:
            vocab = HFVocabulary.of(special_tokens)
            self.token_bytes: list[bytes] = list(vocab.token_bytes)
            self.known: dict[bytes, int] = dict(vocab.known)  # made bytes that exist keep their id
            ids = vocab.byte_ids
            if max(ids) < 256:
                rank = bytes(ids)
                to_word = lambda key: key.translate(rank).decode("latin-1")  # noqa: E731
            else:
                chars = [chr(i) for i in ids]
                to_word = lambda key: key.decode("latin-1").translate(chars)  # noqa: E731
        else:
            self.token_bytes = [bytes([b]) for b in range(256)]
            self.known = {}
            to_word = lambda key: key.decode("latin-1")  # noqa: E731
        words: list[str] = []
        counts: list[int] = []
        # Long words are cut into segments so that a merge touches only the segments that
        # hold the pair; a segment's string ends with the first token of the next segment
        # (its *sentinel*), so every adjacent pair lives in exactly one string.
        seg_next: dict[int, int] = {}
        seg_prev: dict[int, int] = {}
        tokens = 0
        nbytes = 0
        for key, c in table.items():
            n = len(key)
            nbytes += n * c
            tokens += n * c
            if n < 2:  # a single byte holds no pair; it only counts as a token
                continue
            w = to_word(key)
            if n <= LONG_WORD:
                words.append(w)
                counts.append(c)
                continue
            first = len(words)
            for i in range(0, n, SEGMENT):
                words.append(w[i : i + SEGMENT + 1])
                counts.append(c)
            for i in range(first, len(words) - 1):
                seg_next[i] = i + 1
                seg_prev[i + 1] = i
        self.words = words
        self.counts = counts
        self.seg_next = seg_next
        self.seg_prev = seg_prev
        self.corpus_bytes = nbytes
        self.tokens = tokens
        # Pair counts: the words of each count joined into one string, its pairs counted in C.
        by_count: dict[int, list[str]] = defaultdict(list)
        for w, c in zip(words, counts):
            by_count[c].append(w)
        pc: dict[str, int] = {}
        get = pc.get
        for c, group in by_count.items():
            joined = _SEP.join(group)
            for q, n in Counter(map(add, joined, joined[1:])).items():
                pc[q] = get(q, 0) + n * c
        for q in [q for q in pc if _SEP in q]:
            del pc[q]
        # Where each pair occurs: ascending word indices, each word once.
        index: defaultdict[str, list[int]] = defaultdict(list)
        for wi, w in enumerate(words):
            for q in set(map(add, w, w[1:])):
                index[q].append(wi)
        where = dict(index)
        self.pair_counts = pc
        self.where = where
        self.nwords = max(len(words), 1)
        if self.hf:
            self.heap = [((-n) << _PAIR_BITS) + (ord(q[0]) << ID_BITS) + ord(q[1]) for q, n in pc.items()]
        else:  # every index entry is live yet: a pair's first word is the first listed
            nw = self.nwords
            self.heap = [
                ((((-n) * nw + where[q][0]) << _PAIR_BITS) + (ord(q[0]) << ID_BITS) + ord(q[1])) for q, n in pc.items()
            ]
        heapify(self.heap)
        self.next_id = len(self.token_bytes)

    def _key(self, q: str, n: int) -> int:
        low = (ord(q[0]) << ID_BITS) | ord(q[1])
        if self.hf:
            return ((-n) << _PAIR_BITS) + low
        return (((-n) * self.nwords + self._first_word(q)) << _PAIR_BITS) + low

    def _first_word(self, q: str) -> int:
        """The first word that still holds ``q`` (stale entries before it are dropped)."""
        lst = self.where[q]
        words = self.words
        i = 0
        last = len(lst) - 1  # the pair occurs somewhere, so the last candidate needs no test
        while i < last and q not in words[lst[i]]:
            i += 1
        if i:
            del lst[:i]
        return lst[0]

    def _pop_best(self) -> str | None:
        heap = self.heap
        pc = self.pair_counts
        while heap:
            key = heappop(heap)
            q = chr((key >> ID_BITS) & _ID_MASK) + chr(key & _ID_MASK)
            cur = pc.get(q, 0)
            hi = key >> _PAIR_BITS
            n = -hi if self.hf else -(hi // self.nwords)
            if cur != n:
                if cur > 0:
                    heappush(heap, self._key(q, cur))
                continue
            if self.hf:
                return q
            # minbpe: exact ties (same count, same first word) go to the earliest occurrence.
            group = [(key, q)]
            while heap and heap[0] >> _PAIR_BITS == hi:
                k2 = heappop(heap)
                q2 = chr((k2 >> ID_BITS) & _ID_MASK) + chr(k2 & _ID_MASK)
                cur2 = pc.get(q2, 0)
                if cur2 == n:
                    group.append((k2, q2))
                elif cur2 > 0:
                    heappush(heap, self._key(q2, cur2))
            if len(group) == 1:
                return q
            word = self.words[hi % self.nwords]
            best = min(group, key=lambda kq: word.find(kq[1]))
            for kq in group:
                if kq is not best:
                    heappush(heap, kq[0])
            return best[1]
        return None

    def step(self) -> tuple[int, int, int, int] | None:
        """Merge the best pair everywhere; ``(left, right, new, count)`` or ``None``."""
        q = self._pop_best()
        if q is None:
            return None
        pc = self.pair_counts
        words = self.words
        counts = self.counts
        seg_next = self.seg_next
        seg_prev = self.seg_prev
        count = pc[q]
        a, b = ord(q[0]), ord(q[1])
        made = self.token_bytes[a] + self.token_bytes[b]
        new = self.known.get(made) if self.hf else None
        if new is None:
            new = self.next_id
            self.next_id += 1
            self.token_bytes.append(made)
            if self.hf:
                self.known[made] = new
        if new > MAX_ID:
            raise ValueError(f"too many tokens for the trainer (at most {MAX_ID + 1})")
        A, B, X = q[0], q[1], chr(new)
        BA, XX = B + A, X + X
        # gained pair -> [weighted count, index of each word it was made in, ...]
        gain: dict[str, list[int]] = {}
        gget = gain.get

        def gained(g: str, c: int, wi: int) -> None:
            e = gget(g)
            if e is None:
                gain[g] = [c, wi]
            else:
                e[0] += c
                if e[-1] != wi:
                    e.append(wi)

        # A merge at the edge of a segment reaches into its neighbour.
        def left_boundary(wi: int, c: int) -> None:
            """Segment ``wi`` starts with the merged pair: the previous segment's sentinel
            (our first token, ``A``) becomes ``X``, and its pair with the token before changes."""
            p = seg_prev[wi]
            pw = words[p]
            g = pw[-2]
            e = gget(g + A)
            if e is not None:  # made by this very merge at the end of the previous segment ("ab|ab")
                e[0] -= c
            else:
                pc[g + A] -= c
            words[p] = pw[:-1] + X
            gained(g + X, c, p)

        def absorb_next(wi: int, c: int) -> None:
            """Segment ``wi`` ended with the merged pair, whose right half was the sentinel: the
            new token takes over the next segment's first token."""
            nx = seg_next[wi]
            rest = words[nx][1:]
            words[nx] = rest
            if rest:
                r = rest[0]
                pc[B + r] -= c
                words[wi] += r  # the new sentinel
                gained(X + r, c, wi)
            if len(rest) - (1 if nx in seg_next else 0) <= 0:  # the next segment is used up: unlink it
                words[nx] = ""
                after = seg_next.pop(nx, None)
                del seg_prev[nx]
                if after is None:
                    del seg_next[wi]
                else:
                    seg_next[wi] = after
                    seg_prev[after] = wi

        # Occurrences of "ab" (a != b) cannot overlap, so all of them merge; "aaa" merges once.
        same = A == B
        merged = 0 if same else count
        for wi in self.where.pop(q):
            w = words[wi]
            left, found, right = w.partition(q)
            if not found:  # a stale entry: an earlier merge took the pair away
                continue
            c = counts[wi]
            if q not in right:  # one occurrence, by far the most common case
                words[wi] = left + X + right
                if same:
                    merged += c
                if left:
                    g = left[-1]
                    pc[g + A] -= c
                    gained(g + X, c, wi)
                elif wi in seg_prev:
                    left_boundary(wi, c)
                if right:
                    g = right[0]
                    pc[B + g] -= c
                    gained(X + g, c, wi)
                elif wi in seg_next:
                    absorb_next(wi, c)
                continue
            # Several occurrences: occurrence j lies between parts[j - 1] and parts[j].
            # Adjacent occurrences ("abab") lose the pair "ba" and gain "XX", counted once.
            parts = w.split(q)
            words[wi] = X.join(parts)
            k = len(parts) - 1
            if same:
                merged += k * c
            prev = parts[0]
            if not prev and wi in seg_prev:
                left_boundary(wi, c)
            for j in range(1, k + 1):
                nxt = parts[j]
                if prev:
                    g = prev[-1]
                    pc[g + A] -= c
                    gained(g + X, c, wi)
                elif j > 1:
                    pc[BA] -= c
                    gained(XX, c, wi)
                if nxt:
                    g = nxt[0]
                    pc[B + g] -= c
                    gained(X + g, c, wi)
                prev = nxt
            if not prev and wi in seg_next:
                absorb_next(wi, c)
        pc.pop(q, None)  # "aaa" decremented the merged pair itself
        self.tokens -= merged
        where = self.where
        heap = self.heap
        hf = self.hf
        for g, e in gain.items():
            n = e[0]
            del e[0]
            old = where.get(g)
            if old is None:
                where[g] = e
            else:  # "hf" mode re-made an existing token
                old.extend(e)
                n += pc.get(g, 0)
            pc[g] = n
            if n > 0:
                if hf:
                    heappush(heap, ((-n) << _PAIR_BITS) + (ord(g[0]) << ID_BITS) + ord(g[1]))
                else:
                    heappush(heap, self._key(g, n))
        return a, b, new, count
