"""An agent's context items, a few bytes each, read back as the tuples the views use.

Why: the context walk keeps every item of every agent's list for the whole run (a
frame is a list and its length at the call). As a tuple per item (source, effect, call
id, tool name) with its own int and name string, the lists were about 16 MB of a
100,000-effect run's 24 MB context index (0.16x its file). Most items only name an
effect: an assistant turn, a tool result, a memory. Here such an item is one 64-bit code
(its effect's index and a tag), and a tool result's call id (a string the result already
had) is kept beside; the tool's name comes from the effect's kind. Anything else (an
episode, a text, a sub-agent's answer, an edit's message) is kept as its tuple.

Reading an item (``items[k]``, a slice, iteration) gives exactly the tuple the walk
used to append (:mod:`loom_core.views.context` documents them).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from typing import Any, overload

# (source, ref, call id, name): source is episode | text | assistant | tool | child |
# memory | snapshot; ref is an episode/effect index, a literal text or a snapshot dict.
Item = tuple[str, Any, str, str]

_ASSISTANT, _TOOL, _HUMAN, _MEMORY, _OTHER = range(5)
_REF = 3  # an item's code: its tag in the low 3 bits, its effect index above them ...
_ID = 35  # ... and, for a tool result, where its call id is in ``ids`` above that
_EFFECT_MASK = (1 << (_ID - _REF)) - 1


class ItemList(Sequence[Item]):
    """An agent's growing list of context items, stored compactly (see the module).

    One 64-bit code per item (one C-level append for the usual item); a tool result's
    call id is the string the walk matched, kept in ``ids``; any other item is kept
    whole in ``ids`` too.
    """

    __slots__ = ("effects", "codes", "ids")

    def __init__(self, effects: Sequence[Any], items: Sequence[Item] = ()) -> None:
        self.effects = effects  # the document's effects: a tool result's name is its kind's
        self.codes = array("q")
        self.ids: list[Any] = []  # call ids of tool results, and items kept whole
        for item in items:
            self.append(item)

    def append(self, item: Item) -> None:
        """Add an item kept as its tuple (an episode, a text, a child, a snapshot)."""
        self.codes.append(_OTHER | len(self.ids) << _ID)
        self.ids.append(item)

    def add_assistant(self, effect: int) -> None:
        """Model effect ``effect``'s answer: ``("assistant", effect, "", "")``."""
        self.codes.append(effect << _REF)  # (_ASSISTANT is 0)

    def add_tool(self, effect: int, call_id: str, human: bool = False) -> None:
        """Tool result ``effect`` (kind ``tool:<name>``): ``("tool", effect, call_id, name)``;
        a human's answer to ``ask_human`` (``human``) is named ``ask_human``."""
        self.codes.append((_HUMAN if human else _TOOL) | effect << _REF | len(self.ids) << _ID)
        self.ids.append(call_id)

    def add_memory(self, effect: int) -> None:
        """A memory effect's note: ``("memory", effect, "", "user")``."""
        self.codes.append(_MEMORY | effect << _REF)

    def __len__(self) -> int:
        return len(self.codes)

    def _item(self, k: int) -> Item:
        code = self.codes[k]
        tag, ref = code & 7, code >> _REF & _EFFECT_MASK
        if tag == _ASSISTANT:
            return ("assistant", ref, "", "")
        if tag == _MEMORY:
            return ("memory", ref, "", "user")
        extra = self.ids[code >> _ID]
        if tag == _OTHER:
            return extra  # type: ignore[no-any-return]
        if tag == _HUMAN:
            return ("tool", ref, extra, "ask_human")
        return ("tool", ref, extra, (self.effects[ref].kind or "")[5:])

    @overload
    def __getitem__(self, k: int) -> Item: ...

    @overload
    def __getitem__(self, k: slice) -> list[Item]: ...

    def __getitem__(self, k: int | slice) -> Item | list[Item]:
        if isinstance(k, slice):
            return [self._item(j) for j in range(*k.indices(len(self)))]
        n = len(self)
        if not -n <= k < n:
            raise IndexError("item index out of range")
        return self._item(k % n)

    def __iter__(self) -> Iterator[Item]:
        return (self._item(k) for k in range(len(self)))

    def __repr__(self) -> str:
        return f"ItemList({list(self)!r})"
