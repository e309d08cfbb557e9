"""Hypothesis strategies for valid canonical rows, with the strings that break naive converters."""
from __future__ import annotations

from hypothesis import strategies as st

from evalconv.canonical.admissibility import admitted
from evalconv.canonical.row import Row
from evalconv.canonical.schema import enum

TRICKY = ["|", "\\", "\\|", '"', "'", ",", "\n", "\r\n", "\r", "\t", " lead", "trail ", "N/A", "NA",
          "007", "1e5", "true", "null", "None", "NaN", '{"a":1}', "[1]", "", " ", "=1+1", "+1", "-1",
          "@x", "'=x", "''", "{{ var }}", "file://x.txt", "é", "日本", "🙂", "\u2028", "a|b|c"]

texts = st.one_of(st.sampled_from(TRICKY), st.text(max_size=12),
                  st.lists(st.sampled_from(TRICKY), min_size=1, max_size=3).map("".join))
keys = st.one_of(st.sampled_from(["a", "a.b", "a|b", "reason", "x y", "case2", "'q'", "[0]"]), st.text(max_size=6))
numbers = st.one_of(st.integers(min_value=-2**70, max_value=2**70), st.floats(allow_nan=False, allow_infinity=False))
scalars = st.one_of(st.none(), st.booleans(), numbers, texts)
json_values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                            st.dictionaries(keys, inner, max_size=3)),
                           max_leaves=8)
string_lists = st.lists(texts, max_size=4)
ids = st.one_of(st.sampled_from(["cs-refund-1", "a|b", "007", " x", "é"]), st.text(min_size=1, max_size=12))


@st.composite
def case_profiles(draw, case_id: str) -> dict:
    oracle = draw(st.sampled_from(enum("oracleType")))
    case = {"caseId": case_id, "oracleType": oracle, "expectedBehavior": draw(texts),
            "provenance": draw(st.sampled_from(enum("provenance")))}
    optional = {
        "scenario": texts, "actor": texts, "toolActionExpectation": texts, "escalationExpectation": texts,
        "reviewerExpertise": texts, "passLogic": texts, "version": texts, "retirementCondition": texts,
        "caseFamily": texts.map(lambda t: f"{t}~{case_id}"), "unacceptableBehavior": string_lists, "evaluationCriteria": string_lists,
        "linkedConcerns": string_lists, "reversibility": st.sampled_from(["R0", "R1", "R2", "R3"]),
        "blastRadius": st.sampled_from(["B0", "B1", "B2", "B3"]),
        "evaluator": st.sampled_from(admitted(oracle)),
        "extensions": st.dictionaries(keys, st.dictionaries(keys, json_values, max_size=2), max_size=2),
    }
    for name in draw(st.lists(st.sampled_from(sorted(optional)), unique=True, max_size=len(optional))):
        case[name] = draw(optional[name])
    return case


@st.composite
def rows(draw, id_strategy=ids) -> Row:
    row_id = draw(id_strategy)
    metadata = {"case": draw(case_profiles(row_id))}
    metadata.update(draw(st.dictionaries(keys.filter(lambda k: k != "case"), json_values, max_size=3)))
    value = {"id": row_id, "input": draw(st.one_of(texts, json_values)), "metadata": metadata}
    if draw(st.booleans()):
        value["expected"] = draw(st.one_of(texts, json_values))
    return Row.from_json(value)


@st.composite
def row_sets(draw, max_size: int = 5) -> list[Row]:
    """Rows with unique ids (a set is invalid with duplicates)."""
    unique_ids = draw(st.lists(ids, unique=True, max_size=max_size))
    return [draw(rows(st.just(i))) for i in unique_ids]


@st.composite
def row_sets_with_metadata_keys(draw, reserved: list[str], max_size: int = 3) -> list[Row]:
    """Row sets whose metadata also uses keys a writer treats specially (`tags`, `evalconv`, ...)."""
    rows = draw(row_sets(max_size=max_size))
    for row in rows:
        row.metadata.update(draw(st.dictionaries(st.sampled_from(reserved), st.one_of(json_values, string_lists),
                                                 max_size=3)))
    return rows


# ---------------------------------------------------------------- Inspect AI and Ragas

ROLES = ["system", "user", "assistant", "tool"]
chats = st.lists(st.fixed_dictionaries({"role": st.sampled_from(ROLES), "content": texts}), min_size=1,
                 max_size=3).map(lambda m: {"messages": m})


@st.composite
def inspect_rows(draw):
    """Rows Inspect can load: any input but the empty text, chat inputs often."""
    out = []
    for row in draw(row_sets()):
        value = row.to_json()
        value["input"] = draw(st.one_of(chats, texts.filter(bool), json_values.filter(lambda v: v != "")))
        out.append(Row.from_json(value))
    return out


ragas_chats = st.lists(st.fixed_dictionaries({"role": st.sampled_from(["system", "user", "assistant", "tool"]),
                                        "content": texts}), min_size=1, max_size=3).map(lambda m: {"messages": m})
calls = st.lists(st.fixed_dictionaries({"name": texts}, optional={"arguments": st.dictionaries(texts, json_values, max_size=2)}),
                 max_size=3)


@st.composite
def ragas_rows(draw):
    """Rows with chat inputs, tool calls, reference contexts and Ragas run output mixed in."""
    out = []
    for row in draw(row_sets()):
        value = row.to_json()
        if draw(st.booleans()):
            value["input"] = draw(ragas_chats)
        if value["metadata"]["case"]["oracleType"] == "expected-tool-calls" and draw(st.booleans()):
            value["expected"] = draw(calls)
        if draw(st.booleans()):
            value["metadata"]["referenceContexts"] = draw(st.lists(texts, max_size=3))
        if draw(st.booleans()):
            value["metadata"]["ragas_run"] = draw(st.fixed_dictionaries(
                {}, optional={"response": texts, "retrieved_contexts": st.lists(texts, max_size=2)}))
        out.append(Row.from_json(value))
    return out


# ---------------------------------------------------------------- every format (test_every_format)

# Metadata keys some writer treats specially (an envelope, native tags or splits, a vendor's own
# fields read back in place): drawn for every format, so no format's special key goes unexercised.
SPECIAL_METADATA_KEYS = ["tags", "evalconv", "model", "dataset_split", "case_family", "oracle_type",
                         "deepeval", "deepeval_run", "ragas_run", "referenceContexts", "referenceContextIds"]


@st.composite
def any_format_rows(draw, max_size: int = 5) -> list[Row]:
    """Valid rows in the shapes vendor formats map natively (chat inputs, tool calls, reference
    contexts, run output) as well as anything valid, some with the special metadata keys above."""
    out = []
    for row in draw(row_sets(max_size=max_size)):
        value = row.to_json()
        if draw(st.integers(0, 3)) == 0:
            value["input"] = draw(chats)
        if value["metadata"]["case"]["oracleType"] == "expected-tool-calls" and draw(st.booleans()):
            value["expected"] = draw(calls)
        if draw(st.integers(0, 3)) == 0:
            value["metadata"]["referenceContexts"] = draw(st.lists(texts, max_size=3))
        if draw(st.integers(0, 3)) == 0:
            value["metadata"]["ragas_run"] = draw(st.fixed_dictionaries(
                {}, optional={"response": texts, "retrieved_contexts": st.lists(texts, max_size=2)}))
        if draw(st.integers(0, 3)) == 0:
            value["metadata"].update(draw(st.dictionaries(st.sampled_from(SPECIAL_METADATA_KEYS),
                                                          st.one_of(json_values, string_lists), max_size=3)))
        if draw(st.integers(0, 2)) == 0:
            value = draw(version_2(value))
        out.append(Row.from_json(value))
    return out


# ---------------------------------------------------------------- schema version 2 (evidence)

markers = st.sampled_from(["absent", "redacted", "irrelevant"]).map(lambda m: {"$evidence": m})
evidence_texts = st.one_of(texts, markers)
context_refs = st.lists(st.fixed_dictionaries(
    {"source": evidence_texts, "snapshot": st.one_of(texts.filter(bool), st.just({"$evidence": "redacted"}))},
    optional={"span": st.one_of(evidence_texts, st.fixed_dictionaries({"start": st.integers(0, 2**40),
                                                                        "end": st.integers(0, 2**70)}))}),
    max_size=3)


@st.composite
def version_2(draw, value: dict) -> dict:
    """The row at schema version 2 with some of its evidence fields (references, a target turn, a
    permission block, markers in chat turns), or the row as it was when version 2's rules would
    reject that (a chat whose turns are out of order, say)."""
    from evalconv.canonical.source import SourceRow
    from evalconv.canonical.validator import Validator

    out = {**value, "metadata": {**value["metadata"], "case": {**value["metadata"]["case"], "schemaVersion": 2}}}
    case = out["metadata"]["case"]
    fields = {"contextRefs": context_refs, "targetTurn": st.integers(0, 2**70),
              "permission": st.fixed_dictionaries({"callerRole": evidence_texts, "resourceScope": evidence_texts})}
    for name in draw(st.lists(st.sampled_from(sorted(fields)), unique=True)):
        case[name] = draw(fields[name])
    messages = out["input"].get("messages") if isinstance(out["input"], dict) else None
    if isinstance(messages, list) and messages and draw(st.booleans()):
        turns = [dict(m) for m in messages]
        turns[draw(st.integers(0, len(turns) - 1))]["content"] = draw(markers)
        out["input"] = {**out["input"], "messages": turns}
        if "targetTurn" in case or draw(st.booleans()):
            case["targetTurn"] = len(turns)
    return out if not Validator().check(SourceRow(out)).errors else value
