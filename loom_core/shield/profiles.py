"""Built-in shield profiles (loom-format.md §7.5).

The lists are loom-harness's, item for item and in order: ``--profile
ci-safe`` must screen a run the same whichever proxy records it, and rule
order decides which pattern an event names. The descriptions are ours.
``\\\\d`` / ``\\\\copy`` below are two literal backslashes, as in loom.
"""

from __future__ import annotations

import copy
from typing import Any

_READS = ["Read(*)", "Glob(*)", "Grep(*)"]

PROFILES: dict[str, dict[str, Any]] = {
    "claude-code-safe": {
        "description": "Interactive coding sessions. Held for you: network fetches, package "
        "installs, pushes. Refused: secret files, rm -rf, mkfs, curl-to-shell.",
        "default": "confirm",
        "allow": [
            *_READS,
            "LS(*)",
            "WebSearch(*)",
            "Bash(*pytest*)",
            "Bash(*npm test*)",
            "Bash(*npm run test*)",
            "Bash(*go test*)",
            "Bash(*cargo test*)",
            "Bash(*ls *)",
            "Bash(*git status*)",
            "Bash(*git diff*)",
            "Edit(*)",
            "Write(*)",
        ],
        "confirm": [
            "Bash(*curl*)",
            "Bash(*wget*)",
            "Bash(*git push*)",
            "Bash(*npm install*)",
            "Bash(*pip install*)",
            "WebFetch(*)",
        ],
        "deny": [
            "Read(*.env*)",
            "Read(*/.ssh/*)",
            "Read(*/.aws/*)",
            "Read(*secrets*)",
            "Bash(*rm -rf*)",
            "Bash(*curl* | *sh*)",
            "Bash(*:(){*",
            "Bash(*mkfs*)",
        ],
        "sequence": [
            "after Read(*.env*): deny WebFetch*, deny Bash(*curl*), deny Bash(*wget*)",
            "taint sk-ant-*: confirm *",
            "taint sk-proj-*: confirm *",
        ],
    },
    "ci-safe": {
        "description": "Unattended pipelines with no human on hand: a short allow-list of reads "
        "and test runners, a deny default, no held calls.",
        "default": "deny",
        "allow": [*_READS, "LS(*)", "Bash(*pytest*)", "Bash(*npm test*)", "Bash(*go test*)"],
        "deny": ["Read(*.env*)", "Read(*/.ssh/*)"],
        "sequence": ["after Read(*.env*): deny *"],
    },
    "prod-data-safe": {
        "description": "Sessions next to real data. Reads pass; rm, SQL deletes, curl/wget and "
        "file writes are refused; a key seen in a tool result holds every call.",
        "default": "confirm",
        "allow": [*_READS, "WebSearch(*)"],
        "deny": [
            "Bash(*rm*)",
            "Bash(*DROP *)",
            "Bash(*DELETE *)",
            "Bash(*curl*)",
            "Bash(*wget*)",
            "Write(*)",
            "Edit(*)",
            "Read(*.env*)",
            "Read(*/.ssh/*)",
        ],
        "sequence": ["taint sk-*: confirm *", "taint AKIA*: confirm *"],
    },
    "prod-db-safe": {
        "description": "Production databases. Queries and EXPLAIN pass; INSERT/UPDATE/ALTER and "
        "migrations are held; DROP, TRUNCATE and DELETE FROM are refused.",
        "default": "confirm",
        "allow": [*_READS, "Bash(*SELECT *)", "Bash(*EXPLAIN *)", "Bash(*\\\\d*)", "Bash(*SHOW *)"],
        "confirm": [
            "Bash(*INSERT *)",
            "Bash(*UPDATE *)",
            "Bash(*ALTER *)",
            "Bash(*CREATE *)",
            "Bash(*migrate*)",
        ],
        "deny": [
            "Bash(*DROP *)",
            "Bash(*TRUNCATE *)",
            "Bash(*DELETE FROM*)",
            "Read(*.env*)",
            "cap:destructive",
        ],
        "sequence": ["taint password*: confirm *", "taint sk-*: confirm *"],
    },
    "github-actions-safe": {
        "description": "GitHub Actions jobs. Reads, edits, builds and tests pass; secrets and "
        "outbound requests are refused; the default refuses too.",
        "default": "deny",
        "allow": [
            *_READS,
            "LS(*)",
            "Write(*)",
            "Edit(*)",
            "Bash(*pytest*)",
            "Bash(*npm test*)",
            "Bash(*npm run build*)",
            "Bash(*go test*)",
            "Bash(*cargo test*)",
            "Bash(*make *)",
            "Bash(*git status*)",
            "Bash(*git diff*)",
            "Bash(*git log*)",
        ],
        "deny": [
            "Read(*.env*)",
            "Read(*/.ssh/*)",
            "cap:secret",
            "Bash(*curl*)",
            "Bash(*wget*)",
            "WebFetch(*)",
        ],
        "sequence": ["after Read(*secret*): deny *"],
    },
    "k8s-safe": {
        "description": "Cluster work. get/describe/logs pass; apply, scale and helm upgrades are "
        "held; delete, drain, exec and kube-system are refused.",
        "default": "confirm",
        "allow": [
            *_READS,
            "Bash(*kubectl get*)",
            "Bash(*kubectl describe*)",
            "Bash(*kubectl logs*)",
            "Bash(*kubectl top*)",
            "Bash(*helm list*)",
            "Bash(*helm status*)",
        ],
        "confirm": [
            "Bash(*kubectl apply*)",
            "Bash(*kubectl scale*)",
            "Bash(*kubectl rollout*)",
            "Bash(*helm upgrade*)",
            "Bash(*helm install*)",
        ],
        "deny": [
            "Bash(*kubectl delete*)",
            "Bash(*kubectl drain*)",
            "Bash(*kube-system*)",
            "Bash(*kubectl exec*)",
            "Read(*/.kube/config*)",
        ],
        "sequence": ["taint token*: confirm *"],
    },
    "customer-data-safe": {
        "description": "Customer records. Only Glob/Grep pass; anything network-capable and "
        "table dumps are refused; an address seen in a result cuts the network.",
        "default": "confirm",
        "allow": ["Glob(*)", "Grep(*)"],
        "deny": [
            "cap:network",
            "Bash(*COPY *)",
            "Bash(*\\\\copy*)",
            "Bash(*mysqldump*)",
            "Bash(*pg_dump*)",
            "Write(*export*)",
            "Read(*.env*)",
        ],
        "sequence": ["taint *@*.*: deny cap:network", "taint sk-*: confirm *"],
    },
}


def profile_names() -> list[str]:
    """Sorted names, for help text and error messages."""
    return sorted(PROFILES)


def get_profile(name: str) -> dict[str, Any]:
    """A private copy of one profile (callers merge into it); ``KeyError`` if unknown."""
    return copy.deepcopy(PROFILES[name])
