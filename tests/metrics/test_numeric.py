"""ragworkbook.metrics.numeric: extraction rules and the consistency check on hand-made cases."""

from __future__ import annotations

import pytest

from ragworkbook.metrics.numeric import NumberSpan, check_numbers, extract_numbers

REF_C3 = "The big model achieved a BLEU score of 28.4 on English-to-German translation."
ANS_C3 = ("The paper reports that their big model achieved a BLEU score of 41.0 on the WMT 2014 "
          "English-to-German translation task.")
CTX_C3 = ("On the WMT 2014 English-to-German task the big Transformer reaches 28.4 BLEU; on "
          "English-to-French it reaches 41.0.")


def spans(text):
    return [(n.span, n.value, n.kind, n.unit) for n in extract_numbers(text)]


@pytest.mark.parametrize("text, expected", [
    ("h = 8", [("8", 8.0, "quantity", "")]),
    ("a BLEU of 28.4.", [("28.4", 28.4, "quantity", "")]),
    ("1,000 steps and 100,000 more", [("1,000", 1000.0, "quantity", ""), ("100,000", 1e5, "quantity", "")]),
    ("dropout of 10% or 10 % or 10 percent",
     [("10%", 10.0, "quantity", "%"), ("10 %", 10.0, "quantity", "%"),
      ("10 percent", 10.0, "quantity", "%")]),
    ("trained 12h at 3.5x speed", [("12h", 12.0, "quantity", "h"), ("3.5x", 3.5, "quantity", "x")]),
    ("WMT 2014 in 1999", [("2014", 2014.0, "year", ""), ("1999", 1999.0, "year", "")]),
    ("dff = 2048", [("2048", 2048.0, "quantity", "")]),
    ("English-to-German", []),
    ("eight P100 GPUs", [("eight", 8.0, "quantity", "")]),
    ("GPT-3 and β2 = 0.98 and v2", [("0.98", 0.98, "quantity", "")]),
    ("twenty-one or twenty one, not one-to-one nor an eight-layer net", [
        ("twenty-one", 21.0, "quantity", ""), ("twenty one", 21.0, "quantity", "")]),
    ("one of the heads", []),
    ("values -0.5 and 0.9-0.98", [("-0.5", -0.5, "quantity", ""), ("0.9", 0.9, "quantity", ""),
                                  ("0.98", 0.98, "quantity", "")]),
    ("3.3e18 FLOPs, version 1.2.3", [("3.3e18", 3.3e18, "quantity", "")]),
    ("a rate of .5, not 0.5 or 5", [("0.5", 0.5, "quantity", ""), ("5", 5.0, "quantity", "")]),
])
def test_extraction_rules(text, expected):
    assert spans(text) == expected


def test_spans_are_character_offsets():
    for n in extract_numbers(ANS_C3 + " h = 8, eight heads, 10%"):
        assert (ANS_C3 + " h = 8, eight heads, 10%")[n.start:n.end] == n.span
    n41 = extract_numbers(ANS_C3)[0]
    assert n41 == NumberSpan("41.0", ANS_C3.index("41.0"), ANS_C3.index("41.0") + 4, 41.0)


# --- the check: at least ten hand-made cases --------------------------------------------------
def test_c3_flagged_by_reference_with_span():
    res = check_numbers(ANS_C3, reference=REF_C3)
    assert not res.ok
    assert [(n.span, n.start, n.end) for n in res.contradicted] == [("41.0", 64, 68)]
    assert [n.span for n in res.missing] == ["28.4"]
    assert res.explain() == "41.0 [64:68] contradicts the reference (which says 28.4)"


def test_c3_context_alone_is_fooled_when_the_wrong_number_is_in_the_context():
    # 41.0 is in the context (as the English-to-French score): the context check passes it
    assert check_numbers(ANS_C3, context=CTX_C3).ok
    assert not check_numbers(ANS_C3, context=CTX_C3, reference=REF_C3).ok


@pytest.mark.parametrize("answer, context, reference, ok, flagged", [
    # correct answers pass
    ("The big model scored 28.4 BLEU on WMT 2014 English-to-German.", CTX_C3, REF_C3, True, []),
    ("The base model used 8 attention heads.", "We use h = 8 parallel heads.",
     "The base model used 8 attention heads (h = 8).", True, []),
    ("It used eight heads.", "h = 8", "The base model used 8 attention heads (h = 8).", True, []),
    # decimals: 0.1 vs a percentage 10% are the same value; 0.2 is not
    ("Dropout was 10%.", "Pdrop = 0.1", "They used a dropout rate of Pdrop = 0.1.", True, []),
    ("Dropout was 0.2.", "Pdrop = 0.1", "They used a dropout rate of Pdrop = 0.1.", False, ["0.2"]),
    # units: 12 hours supported; 3.5 days is in the context but contradicts the reference
    ("It trained for 12 hours.", "base models took 12 hours; big models 3.5 days", "The base model trained "
     "for 12 hours.", True, []),
    ("It trained for 3.5 days.", "base models took 12 hours; big models 3.5 days", "The base model trained "
     "for 12 hours.", False, ["3.5"]),
    # an unsupported number: not in the context
    ("The encoder has 12 layers.", "The encoder is a stack of N = 6 identical layers.", None, False, ["12"]),
    # thousands separators
    ("It used 4,000 warmup steps.", "warmup_steps = 4000", None, True, []),
    # years: a year the context supports is fine; a wrong year contradicts only a reference year
    ("Published at NIPS 2017 with WMT 2014 data.", "NIPS 2017; WMT 2014", None, True, []),
    ("Published in 2016.", "NIPS 2017", "The paper appeared in 2017.", False, ["2016"]),
    # a year beside the right quantity is not a contradiction of the quantity
    ("On WMT 2014 it got 28.4.", None, REF_C3, True, []),
    # no numbers: nothing to flag (incomplete, not wrong); the missing one is listed
    ("They used a big model.", CTX_C3, REF_C3, True, []),
    # extra numbers beside every reference number are fine against the reference
    ("8 heads, each of dimension 64.", "h = 8 heads, dk = dv = 64", "8 attention heads (h = 8).", True, []),
    # hyphenated phrases and identifiers are not numbers
    ("Trained on P100 GPUs for English-to-German.", "eight P100 GPUs", None, True, []),
    # rounding is not support at the default tolerance, but is with a looser one
    ("It scored 28 BLEU.", CTX_C3, None, False, ["28"]),
])
def test_check_cases(answer, context, reference, ok, flagged):
    res = check_numbers(answer, context=context, reference=reference)
    assert res.ok is ok, res.explain()
    assert [n.span for n in res.flagged] == flagged
    for n in res.flagged:
        assert answer[n.start:n.end] == n.span


def test_missing_is_reported_without_flagging():
    res = check_numbers("They used a big model.", reference=REF_C3)
    assert res.ok and [n.span for n in res.missing] == ["28.4"]


def test_rel_tol_loosens_matching():
    assert check_numbers("28.40", context="28.4").ok
    assert not check_numbers("28.39", context="28.4").ok
    assert check_numbers("28.39", context="28.4", rel_tol=1e-3).ok
    with pytest.raises(ValueError, match="rel_tol must be >= 0"):
        check_numbers("1", context="1", rel_tol=-1)


def test_context_forms():
    class Chunk:
        def __init__(self, text):
            self.text = text

    class Hit:
        def __init__(self, text):
            self.chunk = Chunk(text)

    for ctx in (["h = 8"], [Chunk("h = 8")], [Hit("h = 8")], "h = 8"):
        assert check_numbers("8 heads", context=ctx).ok
    assert not check_numbers("8 heads", context=[]).ok
    with pytest.raises(TypeError, match=r"context\[0\] must be a str or have a .text"):
        check_numbers("8", context=[3])


def test_edge_cases_and_types():
    empty = check_numbers("", context="8", reference="8")
    assert empty.ok and empty.numbers == [] and [n.span for n in empty.missing] == ["8"]
    assert check_numbers("no numbers here").explain() == "no numbers in the answer"
    assert check_numbers("8").explain() == "ok: nothing to check against"
    with pytest.raises(TypeError, match="answer must be a str, got int"):
        check_numbers(8)
    with pytest.raises(TypeError, match="reference must be a str or None"):
        check_numbers("8", reference=8)
    with pytest.raises(TypeError, match="text must be a str"):
        extract_numbers(None)
    d = check_numbers(ANS_C3, reference=REF_C3).to_dict()
    assert d["ok"] is False and d["contradicted"][0]["span"] == "41.0"
