"""Policy files and profile resolution (loom-format.md §7.5).

A policy file is YAML or JSON with loom-harness's keys, so a file written for
``loom proxy --policy`` works here unchanged. Everything is checked where it
is read: a wrong type, an unparseable sequence rule or bad YAML becomes a
``PolicyFileError`` naming the file and the cause, instead of a rule that
silently never fires.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from loom_core.errors import LoadError
from loom_core.shield.profiles import PROFILES, get_profile, profile_names
from loom_core.shield.sequence import parse_sequence_rule
from loom_core.shield.yaml_subset import YamlSubsetError, parse_yaml_subset

LIST_KEYS = ("allow", "confirm", "deny", "sequence", "break_glass")
KNOWN_KEYS = frozenset(
    {
        "default",
        "profile",
        "profiles",
        "require_approver",
        "description",
        "version",
        "name",
        *LIST_KEYS,
    }
)
MAX_POLICY_BYTES = 1 << 20


class ShieldConfigError(ValueError):
    """Shield settings that cannot work (bad flag, unknown profile, bad rule)."""


class ApproverSpec(BaseModel):
    """Who may approve calls matching a pattern, and how many distinct approvals it takes."""

    model_config = ConfigDict(frozen=True)
    names: tuple[str, ...] = ()
    min: int = 1

    @classmethod
    def coerce(cls, value: Any) -> ApproverSpec:
        """From ``[names]``, ``{"names": [...], "min": N}`` or the flag text ``[N:]a,b``.

        ``min`` below 1 counts as 1, as in loom-harness.
        """
        if isinstance(value, ApproverSpec):
            return value
        if isinstance(value, str):
            head, sep, rest = value.partition(":")
            listed, minimum = (rest, int(head)) if sep and head.strip().isdigit() else (value, 1)
            value = {"names": [n.strip() for n in listed.split(",") if n.strip()], "min": minimum}
        elif isinstance(value, (list, tuple)):
            value = {"names": list(value)}
        if not isinstance(value, dict):
            raise ValueError(f"expected a list of names or {{names, min}}, got {value!r}")
        names = value.get("names") or []
        if isinstance(names, str) or not all(isinstance(n, str) for n in names):
            raise ValueError(f"'names' must be a list of strings, got {names!r}")
        try:
            minimum = max(1, int(value.get("min", 1) or 1))
        except (TypeError, ValueError):
            raise ValueError(f"'min' must be a whole number, got {value.get('min')!r}") from None
        return cls(names=tuple(names), min=minimum)


class PolicyFileError(LoadError, ShieldConfigError):
    """A policy file that cannot be used; ``path`` and ``cause`` are separate for the GUI."""


def parse_policy_text(text: str, source: str, use_pyyaml: bool | None = None) -> Any:
    """JSON when the text is an object (or the file ends in .json), else YAML.

    YAML goes through PyYAML when it is importable (``use_pyyaml=None``), as
    loom-harness does, and through our bounded subset reader otherwise.
    """
    if text.lstrip().startswith("{") or source.lower().endswith(".json"):
        try:
            return json.loads(text)
        except json.JSONDecodeError as e:
            raise PolicyFileError(
                source, f"invalid JSON: {e.msg} (line {e.lineno}, column {e.colno})"
            ) from None
    if use_pyyaml is not False:
        try:
            # optional, used only when installed; its stubs (types-PyYAML) are no dependency
            import yaml  # type: ignore[import-untyped]
        except ImportError:
            if use_pyyaml:
                raise
        else:
            try:
                return yaml.safe_load(text) or {}
            except yaml.YAMLError as e:
                raise PolicyFileError(source, f"invalid YAML: {e}") from None
    try:
        return parse_yaml_subset(text)
    except YamlSubsetError as e:
        raise PolicyFileError(source, f"line {e.line}: {e.message}") from None


def _pattern_list(value: Any, key: str, source: str) -> list[str]:
    if value is None or value == {}:
        return []  # an empty block: nothing to add (never "wipe the profile's list")
    if not isinstance(value, list):
        raise PolicyFileError(
            source, f"{key!r} must be a list of patterns, got {type(value).__name__} {value!r}"
        )
    out = []
    for item in value:
        if isinstance(item, dict) and len(item) == 1:
            # PyYAML reads an unquoted "- after X: deny Y" as {"after X": "deny Y"}.
            ((k, v),) = item.items()
            if isinstance(v, (str, int, float)):
                item = f"{k}: {v}"
        if not isinstance(item, str) or not item.strip():
            raise PolicyFileError(source, f"{key!r} items must be non-empty strings, got {item!r}")
        out.append(item)
    return out


def _approvers(value: Any, source: str) -> dict[str, Any]:
    if value is None or value == {}:
        return {}
    if not isinstance(value, dict):
        raise PolicyFileError(
            source,
            f"'require_approver' must map a pattern to approver names, got {type(value).__name__}",
        )
    out = {}
    for pattern, spec in value.items():
        try:
            out[str(pattern)] = ApproverSpec.coerce(spec)
        except ValueError as e:
            raise PolicyFileError(source, f"require_approver {pattern!r}: {e}") from None
    return out


def check_document(data: Any, source: str) -> tuple[dict[str, Any], list[str]]:
    """Validate and normalise one policy document; returns it and warnings."""
    if not isinstance(data, dict):
        raise PolicyFileError(
            source,
            "expected a mapping of settings (default, allow, confirm, "
            f"deny, sequence, profile...), got {type(data).__name__}",
        )
    doc: dict[str, Any] = dict(data)
    warnings = [f"{source}: unknown key {k!r} ignored" for k in doc if k not in KNOWN_KEYS]
    if doc.get("default") is not None and doc["default"] not in ("allow", "confirm", "deny"):
        raise PolicyFileError(
            source, f"'default' must be allow, confirm or deny, got {doc['default']!r}"
        )
    for key in ("profile", "description", "name"):
        if doc.get(key) is not None and not isinstance(doc[key], str):
            raise PolicyFileError(source, f"{key!r} must be a string, got {doc[key]!r}")
    for key in LIST_KEYS:
        if key in doc:
            doc[key] = _pattern_list(doc[key], key, source)
    for raw in doc.get("sequence", []):
        try:
            parse_sequence_rule(raw)
        except ValueError as e:
            raise PolicyFileError(source, f"sequence rule {raw!r}: {e}") from None
    if "require_approver" in doc:
        doc["require_approver"] = _approvers(doc["require_approver"], source)
    return doc, warnings


def _pick_profile(data: dict[str, Any], source: str, pick: str) -> tuple[Any, bool]:
    """A file holding only ``profiles:`` (plus ``profile``/``version``) yields one entry."""
    if "profiles" not in data or not set(data) <= {"profiles", "profile", "version"}:
        return data, False
    profiles = data["profiles"]
    if not isinstance(profiles, dict) or not profiles:
        raise PolicyFileError(source, "'profiles' must be a non-empty mapping of name -> policy")
    if pick and pick not in profiles:
        return data, False  # the caller reports an unknown --profile
    chosen = pick or data.get("profile")
    if chosen:
        if chosen not in profiles:
            raise PolicyFileError(
                source,
                f"profile {chosen!r} is not in this file (it has: {', '.join(map(str, profiles))})",
            )
        return profiles[chosen], bool(pick)
    if len(profiles) == 1:
        return next(iter(profiles.values())), False
    names = ", ".join(map(str, profiles))
    raise PolicyFileError(
        source,
        f"holds {len(profiles)} profiles ({names}); choose one with a "
        "top-level 'profile: NAME' or with --profile",
    )


def load_policy_file(
    path: str | Path, pick: str = "", use_pyyaml: bool | None = None
) -> tuple[dict[str, Any], list[str], bool]:
    """Read, parse and check a policy file: (document, warnings, whether ``pick`` was used)."""
    source = str(path)
    try:
        raw = Path(path).read_bytes()
    except OSError as e:
        raise PolicyFileError(source, f"cannot read the policy file: {e.strerror or e}") from None
    if len(raw) > MAX_POLICY_BYTES:
        raise PolicyFileError(
            source, f"policy file is {len(raw)} bytes; the limit is {MAX_POLICY_BYTES}"
        )
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise PolicyFileError(source, "the policy file is not UTF-8 text") from None
    data = parse_policy_text(text, source, use_pyyaml)
    if isinstance(data, dict):
        data, used = _pick_profile(data, source, pick)
    else:
        used = False
    doc, warnings = check_document(data, source)
    if "profiles" in doc:
        warnings.append(
            f"{source}: 'profiles' is ignored when the file also has other top-level settings"
        )
    return doc, warnings, used


def merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """Lists extend (new items only, in order); everything else overrides."""
    out: dict[str, Any] = json.loads(json.dumps(base))  # a deep copy of a JSON object
    for key, value in extra.items():
        if isinstance(value, list) and isinstance(out.get(key), list):
            out[key] = out[key] + [v for v in value if v not in out[key]]
        else:
            out[key] = value
    return out


def _builtin(name: str, what: str) -> dict[str, Any]:
    if name not in PROFILES:
        raise ShieldConfigError(
            f"{what} {name!r} (built-in profiles: {', '.join(profile_names())})"
        )
    return get_profile(name)


def resolve_policy(
    profile: str = "", policy_path: str | Path | None = None, use_pyyaml: bool | None = None
) -> tuple[dict[str, Any], list[str]]:
    """``--profile`` and/or ``--policy`` -> one document, plus warnings.

    A built-in ``profile`` is the base; a file extends it, and a file's own
    ``profile:`` key names a built-in to extend. Beyond loom-harness,
    ``--profile NAME`` may also pick an entry of the file's ``profiles:`` map.
    """
    doc: dict[str, Any] = {}
    pick = ""
    if profile:
        if profile in PROFILES or not policy_path:
            doc = _builtin(profile, "unknown profile")
        else:
            pick = profile
    warnings: list[str] = []
    if policy_path:
        loaded, warnings, used = load_policy_file(policy_path, pick, use_pyyaml)
        if pick and not used:
            raise ShieldConfigError(
                f"unknown profile {pick!r}: neither built-in "
                f"({', '.join(profile_names())}) nor in {policy_path}"
            )
        named = loaded.get("profile")
        if named:
            if named not in PROFILES:
                raise PolicyFileError(
                    str(policy_path),
                    f"extends unknown profile {named!r} "
                    f"(built-in profiles: "
                    f"{', '.join(profile_names())})",
                )
            base = get_profile(named)
            doc = merge(base, doc) if doc else base
        doc = merge(doc, loaded)
    return doc, warnings
