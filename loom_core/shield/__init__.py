"""The shield: a firewall for tool calls, compatible with loom-harness (loom-format.md §7).

Pure, synchronous and sans-I/O: no sockets, no sleeps, no Qt. The proxy owns
the HTTP and the waiting; the GUI owns the buttons; this package owns the
decisions, so both agree with each other and with ``loom proxy``.

Building a shield (once per proxy session)::

    config = ShieldConfig.from_flags(profile="claude-code-safe", policy="p.yml",
                                     deny=["Bash(*sudo*)"], confirm_timeout=300)
    # None means "no shield requested" (then /loom/shield/* answer 404).
    # ShieldConfig.from_args(ns) after add_shield_arguments(parser) does the same.
    # Bad input raises ShieldConfigError; a bad file PolicyFileError(.path, .cause).
    shield = Shield(config, on_change=listener)  # clock=, new_id= for tests

``build_screen(flags)`` wraps all of this in the proxy's ``Screen`` hook
(``loom_core/proxy/hooks.py``): ``observe_request(exchange)`` and ``await
screen_response(exchange, response)``, waiting as shown below. Done by hand,
per request (in this order, see §6.2)::

    events = shield.observe_request(request_body)   # taint tripwires, before forwarding
    ...forward, read the (reconstructed) response...
    result = await shield.screen_async(response_body, wait)
    # result.body -> send to the client and record; result.events -> shield_events
    # (after the taint events); result.verdicts -> what happened to each call.

``wait(approval)`` is the proxy's: it must return once the approval is
decided or ``approval.remaining(now)`` seconds have passed. With asyncio::

    async def wait(approval):
        done = asyncio.Event()
        stop = shield.approvals.subscribe(
            lambda a, change: a is approval and a.done and done.set())
        try:
            if not approval.done:
                await asyncio.wait_for(done.wait(), approval.remaining(shield.clock()))
        except TimeoutError:
            pass                       # the shield turns it into a timeout deny
        finally:
            stop()

(listeners run on the thread that decides; the proxy decides on its own
loop, otherwise use ``loop.call_soon_threadsafe(done.set)``). Cancelling the
screening task, e.g. when the client disconnects, cancels the approval.
``shield.screen(body, wait=None)`` is the synchronous driver (tests: ``wait``
may decide the approval itself; without ``wait`` held calls time out) and
``shield.screening(body)`` the raw generator (``shield.screen_call(name,
input)`` is the same for one call). ``screen_response(body, decide)`` screens
with any plain ``decide(name, input) -> Verdict``. A ``Verdict`` has
``allowed``, ``via``, ``event``, ``executed_input`` (the operator's edit, if
any), ``reason`` and ``approval_id``; the Responses API shape is documented
in ``screen``.

Control plane (``shield.approvals``, an ``Approvals``)::

    approvals.create(tool, input, rule) -> PendingApproval   # done by screen_call
    approvals.pending()  -> [{"id","tool","input","rule","age_s"[,"approvals","required"]}]
    approvals.decide(id, "approve"|"deny", by=None, reason=None,
                     edited_input=None, always_allow=None) -> "decided" | "recorded"
        # raises ApprovalRejected(.code, .message, .http_error) -> HTTP 404
    approvals.get(id).describe(now)   # a GUI card: signature, state, timeout_s...
    approvals.subscribe(listener)     # listener(approval, "created"|"updated"|"decided"|"removed")
    approvals.expire_due()            # optional periodic sweep; cancel(id) if a client left

``decide`` follows loom-harness: unknown or decided ids are rejected, a deny
from anyone decides, an approve from an identity not allowed by
``require_approver`` is rejected, a break-glass identity approves alone,
otherwise identities accumulate until ``required`` (``by`` joined with "+").
Ours: a deny ``reason`` (event key ``reason``, quoted in the notice), an
``edited_input`` (same JSON type, must not hit a deny rule; restarts a chain;
event key ``edited_input``, the response carries the edit) and
``always_allow`` (a pattern allowed for the rest of the session; event key
``always_allow``). Events otherwise have loom-harness's exact shapes.

Single decisions: ``shield.decide(name, input) -> Decision`` (action, via,
rule, label, evidence) and ``shield.classify(name, input) -> (action,
pattern)`` are side-effect free, for previews; ``infer_capabilities`` answers
``cap:`` rules; ``shield.allow_for_session(pattern)`` is "always allow".
"""

from __future__ import annotations

from loom_core.shield.adapter import ProxyScreen, build_screen
from loom_core.shield.approvals import ApprovalRejected, Approvals, PendingApproval
from loom_core.shield.capabilities import VOCABULARY, infer_capabilities, risk_categories
from loom_core.shield.config import ShieldConfig, add_shield_arguments
from loom_core.shield.engine import Shield
from loom_core.shield.events import Decision, Verdict, deny_reason, notice
from loom_core.shield.match import call_matches, signature
from loom_core.shield.policy import ApproverSpec, PolicyFileError, ShieldConfigError, resolve_policy
from loom_core.shield.profiles import PROFILES, profile_names
from loom_core.shield.screen import ScreenResult, dialect_of, screen_response
from loom_core.shield.sequence import SequenceRule, parse_sequence_rule

__all__ = [
    "ApprovalRejected",
    "Approvals",
    "ApproverSpec",
    "Decision",
    "PROFILES",
    "PendingApproval",
    "PolicyFileError",
    "ProxyScreen",
    "ScreenResult",
    "SequenceRule",
    "Shield",
    "ShieldConfig",
    "ShieldConfigError",
    "VOCABULARY",
    "Verdict",
    "add_shield_arguments",
    "call_matches",
    "build_screen",
    "deny_reason",
    "dialect_of",
    "infer_capabilities",
    "notice",
    "parse_sequence_rule",
    "profile_names",
    "resolve_policy",
    "risk_categories",
    "screen_response",
    "signature",
]
