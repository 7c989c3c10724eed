"""Policy files: our YAML subset, JSON, profile extension, named profiles, clear errors.

Why: the same file must give the same shield as ``loom proxy --policy`` (the
oracle is loom-harness's resolver and its ``_build_shield``), and a broken
file must say which file and what is wrong rather than block nothing.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
from loom.cli import main as loom_main
from loom.policy_file import _mini_yaml, resolve, to_shield_kwargs

from loom_core.errors import LoadError
from loom_core.shield import (
    PolicyFileError,
    ShieldConfig,
    ShieldConfigError,
    profile_names,
    resolve_policy,
)
from loom_core.shield.yaml_subset import YamlSubsetError, parse_yaml_subset
from tests.core.shield.oracle import loom_pair


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("profile", profile_names())
def test_loom_policy_init_files_read_the_same(profile: str, tmp_path: Path) -> None:
    """Files written by ``loom policy init`` parse and resolve exactly as in loom."""
    out = str(tmp_path / "p.yml")
    with contextlib.redirect_stdout(io.StringIO()):
        assert loom_main(["policy", "init", profile, "-o", out]) == 0
    text = Path(out).read_text()
    assert parse_yaml_subset(text) == _mini_yaml(text, out)
    ours, _ = resolve_policy(policy_path=out, use_pyyaml=False)
    theirs = to_shield_kwargs(resolve(policy_path=out))
    for key in ("default", "allow", "confirm", "deny", "sequence"):
        assert ours.get(key, []) == theirs[key], key


EXTENDS = """# extend a built-in
profile: ci-safe
default: confirm   # scalars override
allow:
  - Read(*)          # already there: not repeated
  - Bash(*make *)
deny:
- 'Bash(*it''s*)'
sequence:
  - "after Write(*): confirm Bash*"
require_approver:
  Bash*:
    - alice
    - bob
break_glass:
  - root
"""


def test_extending_a_profile_matches_loom(tmp_path: Path) -> None:
    path = write(tmp_path, "p.yml", EXTENDS.replace("- 'Bash(*it''s*)'", "  - Bash(*its*)"))
    flags = {
        "policy": path,
        "deny": ["Bash(*sudo*)"],
        "rule": ["taint sk-*: deny *"],
        "break_glass": ["ops"],
    }
    theirs, ours, _ = loom_pair(flags)
    c = ours.config
    assert (list(c.deny), list(c.allow), list(c.confirm)) == (
        theirs.deny,
        theirs.allow,
        theirs.confirm,
    )
    assert c.default == theirs.default == "confirm"
    assert [r.raw for r in theirs.sequence] == list(c.sequence)
    assert list(c.break_glass) == theirs.break_glass == ["root", "ops"]
    assert {p: (list(s.names), s.min) for p, s in c.require_approver.items()} == {
        p: (s["names"], s["min"]) for p, s in theirs.approvers.items()
    }
    assert c.allow.count("Read(*)") == 1 and c.allow[-1] == "Bash(*make *)"


def test_quoting_and_compact_lists(tmp_path: Path) -> None:
    doc, _ = resolve_policy(policy_path=write(tmp_path, "p.yml", EXTENDS), use_pyyaml=False)
    assert "Bash(*it's*)" in doc["deny"]
    assert doc["require_approver"]["Bash*"].names == ("alice", "bob")


def test_json_policy_and_flags_append_after_it(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "p.json",
        json.dumps(
            {
                "default": "deny",
                "allow": ["Read(*)"],
                "confirm": ["cap:network"],
                "require_approver": {"cap:money_movement": {"names": ["cfo", "ceo"], "min": 2}},
            }
        ),
    )
    config = ShieldConfig.from_flags(
        policy=path, allow=["Glob(*)"], shield_default="allow", require_approver=["Bash*=1:ops"]
    )
    assert config is not None and config.default == "deny"  # "allow" cannot override
    assert config.allow == ("Read(*)", "Glob(*)")
    assert config.require_approver["cap:money_movement"].min == 2
    assert config.require_approver["Bash*"].names == ("ops",)
    assert ShieldConfig.from_flags(policy=path, shield_default="confirm").default == "confirm"
    theirs, ours, _ = loom_pair({"policy": path, "allow": ["Glob(*)"]})
    assert (theirs.default, theirs.allow) == (ours.config.default, list(ours.config.allow))


NAMED = """profiles:
  strict:
    profile: ci-safe
    deny:
      - Bash(*)
  loose:
    default: allow
"""


def test_named_profiles(tmp_path: Path) -> None:
    path = write(tmp_path, "p.yml", "profile: strict\n" + NAMED)
    doc, _ = resolve_policy(policy_path=path)
    assert doc["default"] == "deny" and doc["deny"][-1] == "Bash(*)"
    assert to_shield_kwargs(resolve(policy_path=path))["deny"] == doc["deny"]
    two = write(tmp_path, "two.yml", NAMED)
    with pytest.raises(PolicyFileError, match="holds 2 profiles"):
        resolve_policy(policy_path=two)
    # ours only: --profile picks an entry of the file's profiles map
    assert resolve_policy(profile="loose", policy_path=two)[0]["default"] == "allow"
    with pytest.raises(ShieldConfigError, match="unknown profile 'nope'"):
        resolve_policy(profile="nope", policy_path=two)
    one = write(tmp_path, "one.yml", "profiles:\n  only:\n    deny:\n      - X\n")
    assert resolve_policy(policy_path=one)[0] == {"deny": ["X"]}


def test_cap_keys_and_empty_blocks(tmp_path: Path) -> None:
    text = "profile: claude-code-safe\ndeny:\nrequire_approver:\n  cap:money_movement: 2:a,b\n"
    doc, _ = resolve_policy(policy_path=write(tmp_path, "p.yml", text))
    assert doc["deny"][0] == "Read(*.env*)"  # an empty block adds nothing, wipes nothing
    assert doc["require_approver"]["cap:money_movement"].min == 2


def test_unknown_keys_warn(tmp_path: Path) -> None:
    config = ShieldConfig.from_flags(policy=write(tmp_path, "p.yml", "denny:\n  - X\n"))
    assert config is not None and "unknown key 'denny'" in config.warnings[0]


@pytest.mark.parametrize(
    ("name", "text", "cause"),
    [
        ("bad.json", '{"deny": [}', "invalid JSON"),
        ("p.yml", "deny:\n\t- X\n", "line 2: tabs"),
        ("p.yml", "deny: [a, b]\n", "line 1: flow-style"),
        ("p.yml", 'deny:\n  - "open\n', "line 2: unterminated"),
        ("p.yml", "deny:\n  - a\n    - b\n", "line 3"),
        ("p.yml", "deny:\n  - a\ndeny:\n  - b\n", "line 3: duplicate key 'deny'"),
        ("p.yml", "- a\n", "expected a mapping"),
        ("p.yml", "deny: Bash(*)\n", "'deny' must be a list"),
        ("p.yml", "default: maybe\n", "'default' must be allow, confirm or deny"),
        ("p.yml", "sequence:\n  - 'after X: allow Y'\n", "sequence rule 'after X: allow Y'"),
        ("p.yml", "profile: nope\n", "unknown profile 'nope'"),
        ("p.yml", "require_approver:\n  X:\n    min: lots\n", "'min' must be a whole number"),
        ("p.yml", "deny: |\n  x\n", "block scalars"),
        ("p.yml", "just words\n", "expected 'key: value'"),
    ],
)
def test_errors_name_the_file_and_the_cause(
    tmp_path: Path, name: str, text: str, cause: str
) -> None:
    path = write(tmp_path, name, text)
    with pytest.raises(PolicyFileError) as info:
        ShieldConfig.from_flags(policy=path, use_pyyaml=False)
    assert info.value.path == path and cause in info.value.cause
    assert isinstance(info.value, LoadError) and str(info.value).startswith(path + ": ")


def test_missing_file_and_unknown_profile() -> None:
    with pytest.raises(PolicyFileError, match="cannot read"):
        ShieldConfig.from_flags(policy="/nonexistent/p.yml")
    with pytest.raises(ShieldConfigError, match="built-in profiles: ci-safe, claude-code-safe"):
        ShieldConfig.from_flags(profile="nope")
    with pytest.raises(ShieldConfigError, match="--require-approver"):
        ShieldConfig.from_flags(deny=["x"], require_approver=["no-equals"])
    with pytest.raises(ShieldConfigError, match="consequence"):
        ShieldConfig.from_flags(rule=["after X: allow Y"])


SUBSET: list[tuple[str, Any]] = [
    ("", {}),
    ("---\na: b # c\n", {"a": "b"}),
    ("a: 'x # y'\nb: x#y\n", {"a": "x # y", "b": "x#y"}),
    ('a: "tab\\there \\u00e9 \\\\d"\n', {"a": "tab\there \u00e9 \\d"}),
    (
        "a:\n  b:\n    c:\n      - '1'\n      - 2\n  d: e\nf: []\n",
        {"a": {"b": {"c": ["1", "2"]}, "d": "e"}, "f": []},
    ),
    ("s:\n  - after Read(*.env*): deny *\n  - *\n", {"s": ["after Read(*.env*): deny *", "*"]}),
    ("a:\n", {"a": None}),
]


@pytest.mark.parametrize(("text", "expected"), SUBSET)
def test_yaml_subset(text: str, expected: Any) -> None:
    assert parse_yaml_subset(text) == expected


def test_yaml_subset_is_bounded() -> None:
    deep = "".join(f"{' ' * (2 * i)}k{i}:\n" for i in range(40)) + " " * 80 + "v: x\n"
    with pytest.raises(YamlSubsetError, match="nesting deeper"):
        parse_yaml_subset(deep)


def test_pyyaml_when_installed(tmp_path: Path) -> None:
    pytest.importorskip("yaml")
    path = write(tmp_path, "p.yml", "sequence:\n  - after Read(*.env*): deny *\n")
    assert resolve_policy(policy_path=path)[0]["sequence"] == ["after Read(*.env*): deny *"]


def test_from_args_matches_from_flags(tmp_path: Path) -> None:
    import argparse

    from loom_core.shield import add_shield_arguments

    parser = argparse.ArgumentParser()
    add_shield_arguments(parser)
    args = parser.parse_args(
        [
            "--profile",
            "ci-safe",
            "--deny",
            "a",
            "--deny",
            "b",
            "--rule",
            "taint x*: deny *",
            "--confirm-timeout",
            "5",
            "--require-approver",
            "Bash*=2:a,b",
            "--break-glass",
            "root",
        ]
    )
    config = ShieldConfig.from_args(args)
    assert config == ShieldConfig.from_flags(
        profile="ci-safe",
        deny=["a", "b"],
        rule=["taint x*: deny *"],
        confirm_timeout=5,
        require_approver=["Bash*=2:a,b"],
        break_glass=["root"],
    )
    assert config is not None and config.deny[-2:] == ("a", "b") and config.confirm_timeout == 5
    assert ShieldConfig.from_args(parser.parse_args([])) is None
    assert ShieldConfig.from_args(parser.parse_args(["--shield-default", "deny"])) is not None
