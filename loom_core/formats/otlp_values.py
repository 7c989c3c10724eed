"""OTLP's JSON values (``AnyValue``, ids, 64-bit times, enums) as plain Python values.

Why apart from the span walk in :mod:`loom_core.formats.otlp_decode`: these are the rules of
the OTLP JSON encoding (opentelemetry-proto ``docs/specification.md``, "JSON Protobuf
Encoding"), each with its tolerance for what producers really write, and the walk reads
better without them. Every refusal is an :class:`OtlpDecodeError` whose text names the field.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

KINDS = {0: "unspecified", 1: "internal", 2: "server", 3: "client", 4: "producer", 5: "consumer"}
_HEX_ID = re.compile(r"[0-9a-fA-F]{16}|[0-9a-fA-F]{32}")


class OtlpDecodeError(ValueError):
    """The bytes are not OTLP trace data; ``str(err)`` is the cause, for one line of report."""


def attributes(raw: Any) -> dict[str, Any]:
    """OTLP ``KeyValue`` list → dict of Python values (entries of a wrong shape skipped)."""
    out: dict[str, Any] = {}
    for item in raw if isinstance(raw, list) else []:
        if isinstance(item, dict) and isinstance(item.get("key"), str):
            out[item["key"]] = any_value(item.get("value"))
    return out


def any_value(raw: Any) -> Any:
    """An OTLP ``AnyValue`` as a Python value (unknown shapes kept as they are)."""
    if not isinstance(raw, dict) or len(raw) != 1:
        return None if raw in ({}, None) else raw
    ((name, value),) = raw.items()
    if name in ("stringValue", "string_value", "boolValue", "bool_value"):
        return value
    if name in ("intValue", "int_value"):
        return _int(value, value)
    if name in ("doubleValue", "double_value"):
        return float(value) if isinstance(value, (int, float, str)) and _floaty(value) else value
    if name in ("arrayValue", "array_value"):
        values = value.get("values") if isinstance(value, dict) else None
        return [any_value(v) for v in values] if isinstance(values, list) else []
    if name in ("kvlistValue", "kvlist_value"):
        return attributes(value.get("values") if isinstance(value, dict) else None)
    if name in ("bytesValue", "bytes_value"):
        return value  # base64 text; no GenAI attribute uses bytes
    return raw


# -- fields ---------------------------------------------------------------------------------


def get(obj: dict[str, Any], *names: str) -> Any:
    for name in names:
        if name in obj:
            return obj[name]
    return None


def type_name(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    names |= {int: "a number", float: "a number", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def obj(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise OtlpDecodeError(f"{where} is {type_name(value)}, not an object")
    return value


def listed(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise OtlpDecodeError(f"{where} is {type_name(value)}, not a list")
    return value


def span_id(value: Any, ids: str, where: str) -> str:
    """A span/trace id as lowercase hex ("" when absent)."""
    if value in (None, ""):
        return ""
    if not isinstance(value, str):
        raise OtlpDecodeError(f"{where} is {type_name(value)}, not a hex id string")
    if ids == "auto" and _HEX_ID.fullmatch(value):
        return value.lower()
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise OtlpDecodeError(f"{where} {value[:40]!r} is neither hex nor base64") from None
    return raw.hex()


def _int(value: Any, default: Any) -> Any:
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            return default
    return default


def _floaty(value: Any) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return True


def nanos(value: Any, where: str) -> int:
    if value is None:
        return 0
    number = _int(value, None)
    if not isinstance(number, int):
        raise OtlpDecodeError(f"{where} {str(value)[:40]!r} is not a number of nanoseconds")
    return number


def kind_name(value: Any) -> str:
    if isinstance(value, str):  # an enum name, as protobuf's JSON mapping may write it
        return value.removeprefix("SPAN_KIND_").lower() or "unspecified"
    number = int(_int(value, 0))
    return KINDS.get(number, str(number))


def status_code(value: Any) -> int:
    if isinstance(value, str):
        value = {"STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}.get(value, value)
    return int(_int(value, 0))
