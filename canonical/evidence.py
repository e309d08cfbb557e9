"""Evidence rules of case-profile version 2: what a case needs before it may run.

A row at a time (nothing is kept between rows), so they run in the worker processes of the
parallel path as they do on one core. Version-1 rows are not held to them: the fields they
check are version 2's (`evalconv migrate SET --to 2`).

- context references (`metadata.case.contextRefs`): each names its snapshot
  (`evidence-without-snapshot`) and, given a manifest of the available sources (`--contexts`),
  resolves in it (`evidence-unresolvable`);
- conversations (a `{"messages": [...]}` input): turns in an order a conversation can have
  (`conversation-unordered`), and a multi-turn case says which turn it judges
  (`conversation-without-target-turn`);
- permission cases (a linked concern `permission`, or a `metadata.case.permission` block): the
  caller role and the resource scope as fields (`permission-without-scope`);
- an empty string where evidence belongs is ambiguous (`ambiguous-empty`): the markers
  `{"$evidence": "absent" | "redacted" | "irrelevant"}` say which is meant.
"""
from __future__ import annotations

from typing import Any, Iterable

from .findings import Finding

MARKER_KEY = "$evidence"
MARKERS = ("absent", "redacted", "irrelevant")
MARKER_HELP = (f'write {{"{MARKER_KEY}": "absent"}} (missing, and known to be missing), '
               f'{{"{MARKER_KEY}": "redacted"}} (exists, withheld from this file) or '
               f'{{"{MARKER_KEY}": "irrelevant"}} (the case does not depend on it)')
PERMISSION_CONCERN = "permission"
PERMISSION_FIELDS = ("callerRole", "resourceScope")
SYSTEM_ROLES = frozenset(("system", "developer"))
TOOL_ROLES = frozenset(("tool", "function"))
CHAT_ROLES = frozenset(("user", "assistant", *SYSTEM_ROLES, *TOOL_ROLES))


def marker(value: Any) -> str | None:
    """The marker a value is (`absent`, `redacted`, `irrelevant`), or None."""
    if isinstance(value, dict) and len(value) == 1 and value.get(MARKER_KEY) in MARKERS:
        return value[MARKER_KEY]
    return None


def _ambiguous(path: str, what: str) -> Finding:
    return Finding("ambiguous-empty", f"{what} is an empty string, which may mean missing, redacted or "
                   f"irrelevant: {MARKER_HELP}", path)


def evidence_findings(value: dict[str, Any], case: dict[str, Any], contexts: "ContextIndex | None" = None) -> list[Finding]:
    """The version-2 evidence rules on one row (the caller checks the row is version 2)."""
    out: list[Finding] = []
    refs = case.get("contextRefs")
    if isinstance(refs, list):
        for i, ref in enumerate(refs):
            if isinstance(ref, dict):
                out += _ref_findings(ref, f"$.metadata.case.contextRefs[{i}]", contexts)
    messages = chat_messages(value.get("input"))
    if messages is not None:
        out += conversation_findings(messages, case)
    out += permission_findings(case)
    return out


def _ref_findings(ref: dict[str, Any], at: str, contexts: "ContextIndex | None") -> list[Finding]:
    out = []
    source, snapshot = ref.get("source"), ref.get("snapshot")
    if source == "":
        out.append(_ambiguous(at + ".source", "the reference's source"))
    if ref.get("span") == "":
        out.append(_ambiguous(at + ".span", "the reference's span"))
    named = f"'{source}'" if isinstance(source, str) and source else "this reference"
    if snapshot is None or snapshot == "" or marker(snapshot) == "absent":
        why = ("has no snapshot" if snapshot is None else "has an empty snapshot" if snapshot == ""
               else "marks its snapshot absent")
        out.append(Finding("evidence-without-snapshot",
                           f"context reference {named} {why}: a case that needs evidence must name the version of "
                           f"the source it was written against (a date, a revision, a hash), or the answer it expects "
                           f"cannot be checked against the passage the run retrieves"
                           + ("; if the version is withheld, mark it {\"$evidence\": \"redacted\"}" if snapshot == ""
                              else ""), at + ".snapshot"))
        return out
    if contexts is not None and isinstance(source, str) and source:
        problem = contexts.resolve(source, snapshot)
        if problem is not None:
            out.append(Finding("evidence-unresolvable", problem, at))
    return out


def chat_messages(value: Any) -> list[Any] | None:
    """The turns of a chat input (`{"messages": [...]}` with at least one turn), or None."""
    if isinstance(value, dict) and isinstance(messages := value.get("messages"), list) and messages \
            and all(isinstance(m, dict) for m in messages):
        return messages
    return None


def conversation_findings(messages: list[dict[str, Any]], case: dict[str, Any]) -> list[Finding]:
    out = _order_findings(messages)
    for i, m in enumerate(messages):
        if m.get("content") == "" and not m.get("tool_calls"):
            out.append(_ambiguous(f"$.input.messages[{i}].content", f"the content of turn {i} ({m.get('role')})"))
    out += _target_findings(messages, case)
    return out


def _order_findings(messages: list[dict[str, Any]]) -> list[Finding]:
    """Turns in an order a conversation can have: the first speaker is not the assistant unless
    a system turn sets it up; no system turn after the first user turn; a tool turn answers an
    assistant turn (or another tool turn); every turn has a known role."""
    out = []
    seen_user = seen_system = False
    previous: str | None = None
    for i, m in enumerate(messages):
        role = m.get("role")
        at = f"$.input.messages[{i}].role"
        if role not in CHAT_ROLES:
            out.append(Finding("conversation-unordered", f"turn {i} has {'no role' if role is None else f'the role {role!r}'}"
                               f": a turn's role is one of {', '.join(sorted(CHAT_ROLES))}", at))
        elif role in SYSTEM_ROLES and seen_user:
            out.append(Finding("conversation-unordered", f"turn {i} is a {role} turn after the first user turn: "
                               f"system instructions come before the conversation they set up", at))
        elif role == "assistant" and not seen_user and not seen_system:
            out.append(Finding("conversation-unordered", f"turn {i} is an assistant turn with no user or system "
                               f"turn before it: nothing prompts it", at))
        elif role in TOOL_ROLES and previous not in ("assistant", *TOOL_ROLES):
            out.append(Finding("conversation-unordered", f"turn {i} is a {role} result that follows "
                               f"{'no turn' if previous is None else f'a {previous} turn'}: a tool result answers "
                               f"an assistant turn's call", at))
        seen_user = seen_user or role == "user"
        seen_system = seen_system or role in SYSTEM_ROLES
        previous = role if isinstance(role, str) else None
    return out


def _target_findings(messages: list[dict[str, Any]], case: dict[str, Any]) -> list[Finding]:
    turns = sum(1 for m in messages if m.get("role") not in SYSTEM_ROLES)
    target = case.get("targetTurn")
    at = "$.metadata.case.targetTurn"
    if target is None:
        if turns < 2:
            return []
        return [Finding("conversation-without-target-turn",
                        f"a multi-turn case ({turns} turns besides system turns) does not say which turn it judges: "
                        f"set metadata.case.targetTurn to the index of that message ({len(messages)} for the reply "
                        f"still to be produced)", at)]
    if not isinstance(target, int) or isinstance(target, bool):
        return []  # the schema says what is wrong with it
    if target > len(messages):
        return [Finding("conversation-without-target-turn",
                        f"targetTurn {target} is past the conversation ({len(messages)} message{'s' if len(messages) > 1 else ''}; "
                        f"{len(messages)} is the reply still to be produced)", at)]
    if target < len(messages) and messages[target].get("role") != "assistant":
        return [Finding("conversation-without-target-turn",
                        f"targetTurn {target} is a {messages[target].get('role')} turn: the turn under test is an "
                        f"assistant turn (or {len(messages)}, the reply still to be produced)", at)]
    return []


def is_permission_case(case: dict[str, Any]) -> bool:
    concerns = case.get("linkedConcerns")
    return "permission" in case or (isinstance(concerns, list) and PERMISSION_CONCERN in concerns)


def permission_findings(case: dict[str, Any]) -> list[Finding]:
    if not is_permission_case(case):
        return []
    block = case.get("permission")
    if not isinstance(block, dict):
        return [Finding("permission-without-scope",
                        "a permission case (linked concern 'permission') has no metadata.case.permission block: "
                        "write {\"callerRole\": ..., \"resourceScope\": ...} as fields, not in a title",
                        "$.metadata.case.permission")]
    out = []
    for name in PERMISSION_FIELDS:
        given = block.get(name)
        at = f"$.metadata.case.permission.{name}"
        if given == "":
            out.append(_ambiguous(at, f"permission.{name}"))
        elif given is None or marker(given) == "absent":
            what = "the caller's role" if name == "callerRole" else "the resources the caller is allowed"
            out.append(Finding("permission-without-scope",
                               f"a permission case {'has no' if given is None else 'marks absent'} permission.{name} "
                               f"({what}): a check of what a caller may do needs it", at))
    return out


class ContextIndex:
    """The sources and snapshots a manifest lists (`--contexts`): small, held in memory, and
    handed to worker processes with the validator."""

    def __init__(self, entries: Iterable[tuple[str, str]], label: str = "the contexts manifest") -> None:
        self.label = label
        self.snapshots: dict[str, set[str]] = {}
        for source, snapshot in entries:
            self.snapshots.setdefault(source, set()).add(snapshot)

    def resolve(self, source: str, snapshot: Any) -> str | None:
        """None when the reference resolves, else what is wrong. A snapshot marked redacted or
        irrelevant resolves when the manifest lists the source at all."""
        known = self.snapshots.get(source)
        if known is None:
            from .suggest import did_you_mean
            return (f"source '{source}' is not in {self.label}{did_you_mean(source, list(self.snapshots))}: "
                    f"the evidence this case needs is not available to the run")
        if marker(snapshot) is not None or not isinstance(snapshot, str):
            return None
        if snapshot in known:
            return None
        listed = ", ".join(sorted(known)[:5]) + (", ..." if len(known) > 5 else "")
        return (f"'{source}' at snapshot '{snapshot}' is not in {self.label}, which lists it at {listed}: "
                f"the passage the case was written against is not the one the run would retrieve")

    def __len__(self) -> int:
        return sum(map(len, self.snapshots.values()))
