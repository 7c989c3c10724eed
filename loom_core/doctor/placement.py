"""Where an item entered the context and which model call first saw it.

Why: a finding is only actionable with a place in the run. The doctor panel
jumps to the step where the item entered; heal forks at the first model call
that saw it and redacts the effects that carry it. Frames come from
:mod:`loom_core.views.context`, so "saw" means "was in the reconstructed context".
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from functools import cached_property

from loom_core.formats.document import Document
from loom_core.views.context import AgentContext, ContextIndex
from loom_core.views.edit_delta import carried


class Placement:
    """Answers placement questions about one document's context index."""

    def __init__(self, doc: Document, index: ContextIndex) -> None:
        self.doc = doc
        self.index = index

    def seq(self, effect: int) -> int:
        """The effect's recorded ``seq`` (its index when the file lacks one)."""
        seq = self.doc.effects[effect].seq
        return seq if isinstance(seq, int) else effect

    def seqs(self, effects: list[int] | tuple[int, ...]) -> tuple[int, ...]:
        return tuple(self.seq(e) for e in effects)

    @cached_property
    def _episode_effect(self) -> dict[int, int]:
        return {ep: b for b, eps in self.index.episode_before.items() for ep in eps}

    def episode_effect(self, episode: int) -> int | None:
        """The effect a user episode was placed before (``None``: never placed)."""
        b = self._episode_effect.get(episode)
        return b if b is not None and b < len(self.doc.effects) else None

    @cached_property
    def _models_by_depth(self) -> dict[int, list[int]]:
        out: dict[int, list[int]] = {}
        for i, c in enumerate(self.index.frame_ctx):
            if c >= 0:
                out.setdefault(self.index.doc.effects[i].depth or 0, []).append(i)
        return out

    @cached_property
    def _item_slot(self) -> dict[int, tuple[int, int]]:
        """Effect -> (context id, position) of the first context list holding it."""
        slots: dict[int, tuple[int, int]] = {}
        for cid, ctx in enumerate(self.index.contexts):
            for pos, item in enumerate(ctx.items):
                if item[0] in ("tool", "memory") and item[1] not in slots:
                    slots[item[1]] = (cid, pos)
        return slots

    @cached_property
    def _frames(self) -> dict[int, tuple[list[int], list[int]]]:
        """Context id -> (frame lengths, model effects), ascending (lists only grow)."""
        frames: dict[int, tuple[list[int], list[int]]] = {}
        for i, c in enumerate(self.index.frame_ctx):
            if c >= 0:
                lens, models = frames.setdefault(c, ([], []))
                lens.append(self.index.frame_len[i])
                models.append(i)
        return frames

    def frames(self, cid: int) -> tuple[list[int], list[int]]:
        """(frame lengths, model effects) of one context list, ascending."""
        return self._frames.get(cid, ([], []))

    def _next_model(self, after: int, depth: int, inclusive: bool = False) -> int | None:
        models = self._models_by_depth.get(depth, [])
        k = (bisect_left if inclusive else bisect_right)(models, after)
        return models[k] if k < len(models) else None

    def first_model(self, effect: int) -> int | None:
        """The first model effect whose context held ``effect``'s item (or, for effects
        that are not context items of their own, the next model call at their depth)."""
        slot = self._item_slot.get(effect)
        if slot is not None:
            return self._first_seeing(*slot)
        if self.doc.effects[effect].kind == "model":
            return effect
        return self._next_model(effect, self.doc.effects[effect].depth or 0)

    def _first_seeing(self, cid: int, pos: int) -> int | None:
        """The first model call whose frame of list ``cid`` reaches ``pos``; when none
        does and a fork's edit replaced the list keeping that message, the first call
        that saw it in the edited list (and so on, through later edits)."""
        ctx = self.index.contexts[cid]
        for _ in range(len(self.index.edits) + 1):  # each step follows one edit
            lens, models = self._frames.get(ctx.cid, ([], []))
            k = bisect_right(lens, pos)
            if k < len(models):
                return models[k]
            kept = self._kept.get(id(ctx))
            if kept is None or pos not in kept[1]:
                return None
            ctx, pos = kept[0], kept[1][pos]
        return None

    @cached_property
    def _kept(self) -> dict[int, tuple[AgentContext, dict[int, int]]]:
        """id() of a list an edit replaced -> (the edited list, the position there of
        each message the edit kept). Lists no model call used are links too."""
        return {
            id(old): (new, dict(carried(self.index, effect)))
            for effect, (old, new) in self.index.edits.items()
        }

    def first_model_of_episode(self, episode: int) -> int | None:
        b = self.episode_effect(episode)
        return None if b is None else self._next_model(b, 0, inclusive=True)

    def first_model_step(self, effect: int | None, episode: int | None = None) -> int | None:
        """``first_model``/``first_model_of_episode`` as a seq."""
        if effect is not None:
            m = self.first_model(effect)
        elif episode is not None:
            m = self.first_model_of_episode(episode)
        else:
            m = None
        return None if m is None else self.seq(m)
