"""Agent re-run: fork a run recorded with ``record -- COMMAND`` by running the agent again.

Why re-run the agent rather than the model: an external agent's loop, tools and side
effects live in its own process; only running it again -- against a proxy in fork
mode (:mod:`loom_core.proxy.forkmode`) that answers the calls before the fork point
from the recording and forwards the rest, edited, to a real model -- makes its tools
run for real after the edit. The agent is started exactly as ``record`` started it
(``workspace.argv`` in ``workspace.cwd``, the SDKs' base-URL variables pointing at
the proxy). The proxy's trace is the branch; this module adds the provenance
(``fork`` member, mode ``"agent"``) and an ``edit`` effect before the first edited
model call (loom-harness's fork marker; a proxy trace's checksum covers it like any
effect, and model keys depend only on the exchange index, so nothing else moves).

The branch's sidecar and journal sit beside it (``<base>.exchanges.jsonl`` ...), so a
branch can itself be forked. The world is not rewound: files the agent's tools wrote
in the parent run are still there when it runs again.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from loom_core.fork.agent_child import run_child
from loom_core.fork.edits import Edit
from loom_core.formats.canonical import effect_key
from loom_core.formats.loader import load
from loom_core.formats.save import save_dict
from loom_core.providers.base import CancelToken
from loom_core.proxy.config import DEFAULT_TARGET, ProxyConfig
from loom_core.proxy.forkmode import ForkError, ForkSource
from loom_core.proxy.forkwire import snapshot_items
from loom_core.proxy.reconstruct import path_dialect
from loom_core.proxy.record import child_env
from loom_core.proxy.runner import RunningProxy, start_proxy
from loom_core.proxy.sidecar import read_sidecar

DEFAULT_TIMEOUT = 1800.0  # seconds the agent may run before it is stopped
NOT_RECORDED = "this run was not recorded with `record -- COMMAND`; use the model re-run"


class AgentRerunError(ValueError):
    """The agent re-run cannot start as asked; the message names the file and the cause."""


@dataclass
class AgentRerunResult:
    """What happened; ``path`` is None when the agent made no model call at all."""

    path: Path | None
    exit_code: int | None  # None when the run was stopped (timeout, cancel)
    served: int  # model calls answered from the recording
    live: int  # model calls forwarded to the target
    diverged_early: bool
    edit_applied: bool  # the fork point was reached and the edit went out
    cancelled: bool = False
    timed_out: bool = False
    fork: dict[str, Any] = field(default_factory=dict)  # the provenance written
    output_tail: list[str] = field(default_factory=list)  # the agent's last output lines

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["path"] = str(self.path) if self.path else None
        return data


@dataclass
class AgentRerunPlan:
    """A checked re-run, before anything runs: ``fork.n`` model calls will be served
    from the recording (free), the rest go live to ``target``."""

    parent: Path
    data: dict[str, Any]
    step: int
    edit: Edit
    fork: ForkSource
    argv: list[str]
    cwd: str
    target: str


def _workspace(data: dict[str, Any], path: Path) -> tuple[list[str], str]:
    ws = data.get("workspace")
    argv = ws.get("argv") if isinstance(ws, dict) else None
    cwd = ws.get("cwd") if isinstance(ws, dict) else None
    if not (
        isinstance(argv, list)
        and argv
        and all(isinstance(a, str) for a in argv)
        and isinstance(cwd, str)
        and cwd
    ):
        raise AgentRerunError(f"{path}: {NOT_RECORDED}")
    if not os.path.isdir(cwd):
        raise AgentRerunError(f"{path}: the recorded working directory {cwd} does not exist")
    return argv, cwd


def _exchange_of(doc: Any, step: int, path: Path) -> int:
    """The fork exchange: the step's index among the trace's model calls."""
    models = [e.seq for e in doc.effects if e.kind == "model"]
    if step not in models:
        kinds = {e.seq: e.kind for e in doc.effects}
        what = f"a {kinds[step]} step" if step in kinds else "not a step of this run"
        raise AgentRerunError(
            f"{path}: step {step} is {what}; fork at a model step "
            f"({', '.join(map(str, models[:12]))}{' ...' if len(models) > 12 else ''})"
        )
    return models.index(step)


def plan_agent_rerun(
    parent_path: str | Path, step_seq: int, edit: Edit, target: str | None = None
) -> AgentRerunPlan:
    """Check everything that can be checked before a process starts (raises
    :class:`AgentRerunError`, or :class:`~loom_core.errors.LoadError` for a bad file)."""
    path = Path(parent_path)
    doc = load(path)
    data = json.loads(path.read_bytes())
    argv, cwd = _workspace(data, path)
    n = _exchange_of(doc, step_seq, path)
    try:
        fork = ForkSource(path, n, edit)
    except ForkError as err:
        raise AgentRerunError(str(err)) from err
    dialect = str((data.get("workspace") or {}).get("dialect") or "")
    default = "https://api.openai.com" if dialect == "openai" else DEFAULT_TARGET
    return AgentRerunPlan(
        path,
        data,
        step_seq,
        edit,
        fork,
        argv,
        cwd,
        (target or fork.recorded_target or default).rstrip("/"),
    )


def agent_rerun(
    parent_path: str | Path,
    step_seq: int,
    edit: Edit,
    out_path: str | Path,
    *,
    target: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    cancel: CancelToken | None = None,
    on_line: Callable[[str], None] | None = None,
) -> AgentRerunResult:
    """Re-run the recorded agent from model step ``step_seq`` with ``edit``; write the
    branch to ``out_path``. Blocks (run it in a worker); ``on_line`` gets each line the
    agent prints, on the calling thread; ``cancel`` or ``timeout`` stop the agent (SIGTERM, then SIGKILL after
    :data:`~.agent_child.GRACE` s) and the branch keeps what was recorded until then."""
    plan = plan_agent_rerun(parent_path, step_seq, edit, target)
    out = Path(out_path)
    if out.resolve() == plan.parent.resolve():
        raise AgentRerunError(f"{out}: the branch would overwrite its parent")
    if not out.parent.is_dir():
        raise AgentRerunError(f"{out}: no such directory {out.parent}")
    return asyncio.run(_run(plan, out, timeout, cancel, on_line))


async def _run(
    plan: AgentRerunPlan,
    out: Path,
    timeout: float,
    cancel: CancelToken | None,
    on_line: Callable[[str], None] | None,
) -> AgentRerunResult:
    config = ProxyConfig(
        port=0,
        target=plan.target,
        save=str(out),
        fork_from=str(plan.parent),
        fork_at=plan.fork.n,
        fork_edit=plan.edit.to_dict(),
    )
    workspace = {
        k: v for k, v in (plan.data.get("workspace") or {}).items() if k not in ("changes", "git")
    }  # those described the parent's run
    workspace["recorded_at"] = _now()
    try:
        proxy = await start_proxy(config, workspace=workspace, fork=plan.fork)
    except OSError as err:
        raise AgentRerunError(f"{out}: cannot start the fork proxy ({err})") from err
    tail: deque[str] = deque(maxlen=40)
    try:
        env = child_env(dict(os.environ), proxy.url)
        code, stopped = await run_child(plan.argv, plan.cwd, env, timeout, cancel, on_line, tail)
    except OSError as err:
        raise AgentRerunError(f"cannot run {plan.argv[0]}: {err.strerror or err}") from err
    finally:
        await proxy.close()
    return _finish(plan, out, proxy, code, stopped, list(tail))


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _edited_exchange(plan: AgentRerunPlan, proxy: RunningProxy) -> int | None:
    """The branch exchange whose request went out edited first (from the branch sidecar)."""
    fork, session = plan.fork, proxy.session
    if fork.fork_request is None or session is None or plan.edit.is_empty():
        return None
    for x in read_sidecar(session.paths.exchanges).exchanges:
        if x.request == fork.fork_request:
            return x.n
    return None  # the edited call never completed (upstream error, stopped)


def _insert_edit(log: list[dict[str, Any]], exchange: int, items: list[dict[str, Any]]) -> int:
    """Put an ``edit`` effect just before model call ``exchange``; returns its seq."""
    models = [i for i, e in enumerate(log) if e.get("kind") == "model"]
    at = models[exchange]
    log.insert(
        at,
        {
            "seq": at,
            "kind": "edit",
            "key": effect_key("edit", {"turn": exchange}),
            "result": items,
            "depth": 0,
        },
    )
    for i in range(at + 1, len(log)):
        log[i] = {**log[i], "seq": i}
    return at


def _finish(
    plan: AgentRerunPlan,
    out: Path,
    proxy: RunningProxy,
    code: int | None,
    stopped: str | None,
    tail: list[str],
) -> AgentRerunResult:
    fork, session = plan.fork, proxy.session
    stats = fork.stats()
    provenance: dict[str, Any] = {
        "parent": {"path": os.path.abspath(plan.parent), "checksum": plan.data.get("checksum")},
        "step": plan.step,
        "turn": fork.n,
        "edit": plan.edit.to_dict(),
        "reason": plan.edit.reason,
        "mode": "agent",
        "status": stopped or "done",
        "exit_code": code,
        "diverged_early": bool(fork.diverged),
        "created_at": _now(),
        "matching": stats["matching"],
        "served": stats["served"],
        "live": stats["live"],
        "target": plan.target,
    }
    written = None
    if session is not None and session.exchanges:
        data = session.trace()
        data["log"] = list(data["log"])
        exchange = _edited_exchange(plan, proxy)
        if exchange is not None:
            items = snapshot_items(
                fork.fork_request or {}, path_dialect(fork.fork_path), plan.edit.inject
            )
            provenance["edit_seq"] = _insert_edit(data["log"], exchange, items)
        data["fork"] = provenance
        save_dict(data, out)
        written = out
    return AgentRerunResult(
        written,
        code,
        stats["served"],
        stats["live"],
        bool(fork.diverged),
        fork.fork_request is not None,
        stopped == "cancelled",
        stopped == "timeout",
        provenance,
        tail,
    )
