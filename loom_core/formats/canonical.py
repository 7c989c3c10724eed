"""The canonical JSON serialisation loom-harness hashes (loom-format.md §2.1, §3).

Checksums and effect keys are SHA-256 over ``json.dumps(value, sort_keys=True)``
with Python's defaults: ``", "``/``": "`` separators, ASCII-only escapes and
Python float repr. The standard library encoder produces exactly that, so we use
it rather than re-implementing the escaping rules; only its output is the contract.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

CHECKSUM_PREFIX = "sha256:"


def call_signature(name: str, tool_input: Any) -> str:
    """``name(<json.dumps(input, sort_keys=True, default=str)>)``: how the shield names a call (§7.1).

    Inputs JSON cannot encode even with ``default=str`` (mixed-type keys,
    cycles) fall back to ``str(input)``, as loom-harness does, so such a call
    is still screened rather than crashing the proxy. The one definition: the
    shield's matching and the viewer's placement of its notices must agree.
    """
    try:
        args = json.dumps(tool_input, sort_keys=True, default=str)
    except (TypeError, ValueError):
        args = str(tool_input)
    return f"{name}({args})"


def canonical_bytes(value: Any) -> bytes:
    """Serialise ``value`` the way loom-harness does before hashing."""
    return json.dumps(value, sort_keys=True, default=str).encode("utf-8")


def checksum(document: dict[str, Any]) -> str:
    """Checksum of a trace document: every member except ``checksum`` itself."""
    body = {k: v for k, v in document.items() if k != "checksum"}
    return CHECKSUM_PREFIX + hashlib.sha256(canonical_bytes(body)).hexdigest()


def effect_key(kind: str, payload: Any) -> str:
    """The 12-hex input hash of an effect: ``sha256(JSON([kind, payload]))[:12]``."""
    return hashlib.sha256(canonical_bytes([kind, payload])).hexdigest()[:12]


def harness_sys_hash(system: str) -> str:
    """``meta.sys_hash`` / ``systems`` key as the harness writer computes it."""
    return effect_key("system", system)


def _key_of(canonical: str) -> str:
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:12]


def proxy_model_key(exchange_index: int) -> str:
    """Proxy model keys depend only on the exchange index (§3.4).

    The canonical JSON is spelled out (what ``json.dumps`` writes for an int): the
    recording proxy makes one per exchange, and the general encoder was a fifth of
    that key's cost."""
    if type(exchange_index) is not int:
        return effect_key("model", {"n": exchange_index})
    return _key_of(f'["model", {{"n": {exchange_index}}}]')


def proxy_tool_key(kind: str, tool_use_id: str) -> str:
    """Proxy tool keys hash the tool_use id under the tool's kind (§3.4)."""
    if type(kind) is not str or type(tool_use_id) is not str:
        return effect_key(kind, {"id": tool_use_id})
    return _key_of(f'[{_string(kind)}, {{"id": {_string(tool_use_id)}}}]')


_string = json.encoder.encode_basestring_ascii  # json.dumps of a str, in C
