"""``build_screen``: the shield as the proxy's ``Screen`` hook (loom_core/proxy/hooks.py).

The proxy looks for ``loom_core.shield.build_screen(flags)`` and calls
``observe_request(exchange)`` before forwarding and ``await
screen_response(exchange, response)`` before persisting. This module is that
bridge and nothing more: the waiting uses an ``asyncio.Event`` woken by the
approvals registry, no sockets, and the control plane (HTTP routes, token
file) stays in the proxy, which reaches the registry as ``screen.approvals``.
It implements the proxy's contract, so it imports the contract's types; the
proxy finds this engine by name at run time (fails closed without it).
"""

from __future__ import annotations

import asyncio
from typing import Any

from loom_core.proxy.config import ShieldFlags
from loom_core.proxy.hooks import Screened
from loom_core.shield.approvals import PendingApproval
from loom_core.shield.config import ShieldConfig
from loom_core.shield.engine import Shield


def config_from_proxy_flags(flags: ShieldFlags | ShieldConfig) -> ShieldConfig | None:
    """The resolved ``ShieldConfig`` from the proxy's :class:`ShieldFlags` (or pass one
    through).

    Its ``profiles``/``policies`` are lists because the flags repeat; like
    ``loom proxy`` (a plain option) the last one counts, with a warning.
    """
    if isinstance(flags, ShieldConfig):
        return flags
    profiles, policies = list(flags.profiles), list(flags.policies)
    config = ShieldConfig.from_flags(
        profile=profiles[-1] if profiles else "",
        policy=policies[-1] if policies else None,
        deny=flags.deny,
        allow=flags.allow,
        confirm=flags.confirm,
        rule=flags.rules,
        shield_default=flags.default or "allow",
        confirm_timeout=flags.confirm_timeout,
        require_approver=flags.require_approver,
        break_glass=flags.break_glass,
    )
    extra = [
        f"--{name} given {len(values)} times; only the last one ({values[-1]}) is used"
        for name, values in (("profile", profiles), ("policy", policies))
        if len(values) > 1
    ]
    if config is not None and extra:
        config = config.model_copy(update={"warnings": (*config.warnings, *extra)})
    return config


class ProxyScreen:
    """One proxy session's shield behind the proxy's two-call contract."""

    def __init__(self, shield: Shield) -> None:
        self.shield = shield
        self.approvals = shield.approvals
        self.warnings = shield.config.warnings

    def observe_request(self, exchange: Any) -> list[dict[str, Any]]:
        """Taint tripwires over the request's tool results; never blocks."""
        return self.shield.observe_request(exchange.request)

    async def wait(self, approval: PendingApproval) -> None:
        """Return once ``approval`` is decided or out of time (then the shield times it out)."""
        loop = asyncio.get_running_loop()
        done = asyncio.Event()

        def on_change(a: PendingApproval, change: str) -> None:
            if a is approval and a.done:
                loop.call_soon_threadsafe(done.set)

        stop = self.approvals.subscribe(on_change)
        try:
            if not approval.done:
                await asyncio.wait_for(done.wait(), approval.remaining(self.shield.clock()))
        except TimeoutError:
            pass
        finally:
            stop()

    async def screen_response(self, exchange: Any, response: dict[str, Any]) -> Any:
        """Screen; cancelling this (client gone) cancels the held approval and re-raises."""
        result = await self.shield.screen_async(response, self.wait)
        return Screened(
            response=result.body, events=result.events, changed=result.body is not response
        )


def build_screen(flags: ShieldFlags | ShieldConfig, **shield_options: Any) -> ProxyScreen | None:
    """The proxy's screen for these flags, or ``None`` when they ask for no shield.

    ``shield_options`` go to ``Shield`` (``clock``, ``new_id``, ``on_change``).
    """
    config = config_from_proxy_flags(flags)
    return None if config is None else ProxyScreen(Shield(config, **shield_options))
