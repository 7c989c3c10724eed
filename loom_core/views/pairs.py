"""Which model call each tool result answers, as one int per effect.

Why not a dict: a dict entry and two int objects per pair were about 5 MB of a
100,000-effect run's context index (0.05x its file); the walk writes the calling
model effect into a per-effect array instead (-1: no call), and :class:`ResultPairs`
reads it as the mapping the views ask (result effect -> model effect, in effect order).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Mapping

import numpy as np
import numpy.typing as npt


class ResultPairs(Mapping[int, int]):
    """A read-only view of a per-effect "caller" array as {result effect: model effect}."""

    __slots__ = ("caller",)

    def __init__(self, caller: array[int]) -> None:
        self.caller = caller  # effect -> the model effect whose call it answers, or -1

    def __getitem__(self, effect: int) -> int:
        if 0 <= effect < len(self.caller):
            model = self.caller[effect]
            if model >= 0:
                return model
        raise KeyError(effect)

    def results(self) -> npt.NDArray[np.int64]:
        """Every result effect that answers a call, in effect order (one numpy pass)."""
        return np.flatnonzero(np.frombuffer(self.caller, dtype=np.intc) >= 0).astype(np.int64)

    def __iter__(self) -> Iterator[int]:
        return iter(self.results().tolist())

    def __len__(self) -> int:
        return len(self.results())
