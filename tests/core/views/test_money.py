"""One money formatter: the step list, the status bar, Compare's deltas, the plot's axis and
the commands write dollars the same way (``−$0.0118`` beside ``−$0.002571`` and a priced step
shown as ``$0.0000`` were three formats of one thing)."""

from __future__ import annotations

import math

import pytest

from loom_core.views.pricing import format_usd


@pytest.mark.parametrize(
    "value, text",
    [
        (0.0, ""),
        (math.nan, "?"),
        (1234.5, "$1,234.50"),
        (0.1302, "$0.1302"),
        (0.0118, "$0.0118"),
        (0.002571, "$0.0026"),  # four decimals below a dollar, whatever the size
        (0.00004, "$0.00004"),  # a priced call is never "$0.0000"
        (0.0000421, "$0.000042"),
        (-0.0118, "−$0.0118"),  # a minus sign, before the dollar
    ],
)
def test_money_is_written_one_way(value: float, text: str) -> None:
    assert format_usd(value) == text


def test_a_delta_carries_its_sign() -> None:
    assert format_usd(0.0133, signed=True) == "+$0.0133"
    assert format_usd(-0.002571, signed=True) == "−$0.0026"
