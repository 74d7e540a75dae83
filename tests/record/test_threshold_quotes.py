"""Per-claim thresholds are justified by the paper's own words (issue 26, item 2: "a per-claim threshold is allowed
only with the quote that justifies it, and the generated section shows it").

A ledger entry of the magnitude rule cites either a phrase of the project-wide table (``PHRASES``) or its own
``threshold`` with ``threshold_quote``. The quote is the paper's words **verbatim**: "..." marks an omission and
[square brackets] hold our remarks (how the words become the numbers), as in any scholarly quotation. This test
checks every committed quote against the text of its paper (the papers' page maps each paper to its notebook), and
that the record's criterion text -- what the claims table and the generated section print -- shows the quote.
A threshold without a quote is refused by the loader (tests/record/test_reproduction.py, ``_mutate(..., threshold=...)``).
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
from pathlib import Path

import pytest

from calibnb.record.reproduction import LedgerError, criterion_text, load_ledger

ROOT = Path(__file__).resolve().parents[2]
LEDGERS = sorted((ROOT / "notebooks" / "claims").glob("*.yaml"))


def papers_dir() -> Path | None:
    """The folder of the papers' text (``CALIBNB_PAPERS_DIR``, else ``papers/`` beside the data mirror)."""
    candidates = [os.environ.get("CALIBNB_PAPERS_DIR")]
    if os.environ.get("CALIBNB_DATA_DIR"):
        candidates.append(str(Path(os.environ["CALIBNB_DATA_DIR"]).parent / "papers"))
    for c in candidates:
        if c and (Path(c) / "README.md").exists():
            return Path(c)
    return None


def paper_texts() -> dict[str, str]:
    """{notebook stem: the paper's extracted text}, from the papers' page table."""
    folder = papers_dir()
    if folder is None:
        return {}
    table = re.findall(r"\| `([\w.]+\.txt)` \|[^|\n]*\| `notebooks/(\w+)\.ipynb` \|", (folder / "README.md").read_text())
    return {stem: (folder / name).read_text(encoding="utf-8") for name, stem in table if (folder / name).exists()}


def _normal(text: str) -> str:
    """Lower-case letters and digits only: extraction damage (hyphenation, bold marks, dashes) does not matter."""
    return re.sub(r"[^a-z0-9]+", "", text.replace("-\n", "").lower())


def quote_fragments(quote: str) -> list[str]:
    """The paper's words of a quote: our [remarks] removed, split at the omissions ("..." or "…")."""
    without_remarks = re.sub(r"\[[^\]]*\]", " ", quote)
    return [f.strip() for f in re.split(r"\.\.\.|…", without_remarks) if _normal(f)]


def missing_fragments(quote: str, paper: str) -> list[str]:
    """Fragments of ``quote`` that are not in ``paper`` (all of it when the quote has no words of the paper)."""
    fragments = quote_fragments(quote)
    if not fragments:
        return [quote]
    text = _normal(paper)
    return [f for f in fragments if _normal(f) not in text]


def per_claim_thresholds():
    for path in LEDGERS:
        ledger = load_ledger(path)
        for item in ledger.claims.values():
            if item.threshold is not None:
                yield pytest.param(path.stem, item, id=f"{path.stem}:{item.id}")


def test_the_check_rejects_words_not_in_the_paper_and_spares_remarks_and_omissions():
    paper = "Note, in the cases where temperature scaling outperforms our method, the gap in KS error between the\n" \
            "two methods is marginal (< **0.3%**) and our meth-\nod is the second best."
    assert missing_fragments("the gap in KS error between the two methods is marginal (< 0.3%)", paper) == []
    assert missing_fragments("the gap in KS error ... is marginal [0.3 pp, our bound]", paper) == []
    assert missing_fragments("our method is the second best", paper) == []          # hyphenation across a line
    assert missing_fragments("the gap in KS error is marginal (< 0.3%)", paper) == \
        ["the gap in KS error is marginal (< 0.3%)"]                                  # words left out without "..."
    assert missing_fragments("[a bound of our own]", paper) == ["[a bound of our own]"]  # no words of the paper
    assert missing_fragments("the gap is at most 0.5%", paper) == ["the gap is at most 0.5%"]


def test_a_per_claim_threshold_without_its_quote_is_refused(tmp_path):
    path = tmp_path / "ledger.yaml"
    path.write_text("paper: P\nnotebook: ledger\nclaims:\n- id: c\n  quote: q\n  locator: l\n  kind: range\n"
                    "  rule: magnitude\n  threshold: [0.0, 0.2]\n  refuted_by: 0.5\n  sources: [s]\n"
                    "  expected: reproduces\n  reason: r\n")
    with pytest.raises(LedgerError, match="field 'threshold_quote': must be a non-empty string"):
        load_ledger(path)


@pytest.mark.parametrize(("stem", "item"), list(per_claim_thresholds()))
def test_every_per_claim_threshold_quotes_its_paper_and_the_record_shows_it(stem, item):
    assert item.threshold_quote, f"{stem}: claim {item.id!r} has a per-claim threshold without the paper's words"
    assert f"“{item.threshold_quote}”" in criterion_text(item)
    texts = paper_texts()
    if stem not in texts:
        pytest.skip("the papers' text is not on this machine (set CALIBNB_PAPERS_DIR)")
    missing = missing_fragments(item.threshold_quote, texts[stem])
    assert not missing, (f"{stem}: the threshold_quote of claim {item.id!r} is not the paper's words: {missing}; quote "
                         "verbatim, '...' for an omission, our remarks in [square brackets]")


def test_the_committed_ledgers_have_per_claim_thresholds_to_check():
    # the parametrised test above must not pass vacuously
    assert len(list(per_claim_thresholds())) >= 5


def _half_printed_unit(value: float) -> float:
    """Half a unit of the last digit of ``value`` as the ledger writes it (0.25 -> 0.005, 1500 -> 0.5).

    A value printed with trailing zeros (0.50) reads as fewer digits here (0.5 -> 0.05): the bound is then looser,
    so an entry this test flags is wider than its printed precision for certain.
    """
    text = repr(float(value)).rstrip("0").rstrip(".") if not float(value).is_integer() else "0"
    decimals = len(text.split(".")[1]) if "." in text else 0
    return 0.5 * 10.0 ** (-decimals)


def test_half_printed_unit():
    assert _half_printed_unit(0.25) == pytest.approx(0.005) and _half_printed_unit(1500) == 0.5
    assert _half_printed_unit(0.004) == pytest.approx(0.0005) and _half_printed_unit(-0.26) == pytest.approx(0.005)


def wider_tolerances():
    for path in LEDGERS:
        for item in load_ledger(path).claims.values():
            if item.kind == "number" and item.tol > _half_printed_unit(item.paper) * (1 + 1e-9):
                yield pytest.param(path.stem, item, id=f"{path.stem}:{item.id}")


@pytest.mark.parametrize(("stem", "item"), list(wider_tolerances()))
def test_a_tolerance_wider_than_the_printed_precision_quotes_the_paper(stem, item):
    """The value rule's tolerance is half a unit of the paper's last printed digit; a wider one is a per-claim
    threshold, allowed only with the paper's word that justifies it (e.g. 'roughly'), quoted in tol_reason from the
    claim's own quote."""
    quoted = re.findall(r"'([^']+)'|“([^”]+)”", item.tol_reason or "")
    words = [a or b for a, b in quoted]
    assert any(w.strip() and _normal(w) in _normal(item.quote) for w in words), (
        f"{stem}: claim {item.id!r} has tol {item.tol:g}, wider than half a printed unit of {item.paper:g}, and its "
        "tol_reason quotes no word of the paper's claim that justifies it")


def test_the_tolerance_check_rejects_an_unquoted_wider_tolerance(tmp_path):
    path = tmp_path / "ledger.yaml"
    path.write_text("paper: P\nnotebook: ledger\nclaims:\n- id: c\n  quote: Acc 0.74\n  locator: l\n  kind: number\n"
                    "  rule: value\n  paper: 0.74\n  tol: 0.01\n  tol_reason: 'project page: within 0.01'\n"
                    "  refuted_by: 0.76\n  sources: [s]\n  expected: reproduces\n  reason: r\n")
    item = load_ledger(path).claims["c"]
    assert item.tol > _half_printed_unit(item.paper)
    with pytest.raises(AssertionError, match="quotes no word of the paper"):
        test_a_tolerance_wider_than_the_printed_precision_quotes_the_paper("ledger", item)
    roughly = dataclasses.replace(item, quote="roughly 0.74", tol_reason="'roughly': within 0.01")
    test_a_tolerance_wider_than_the_printed_precision_quotes_the_paper("ledger", roughly)


# ------------------------------------------------ numbers that define a measure (issue 26 item 2)
#
# A ledger's reason may define its measure with a number of ours ("a network counts when its KS exceeds 2%"). Such
# a number is allowed only as a bound of the project-wide phrase table, the claim's quoted per-claim threshold, or
# a declared ``measure_thresholds`` entry: the paper's words (``quote``, checked against the paper below) or
# labelled ours (``ours``), which the claims table and the generated section print. The scan below finds every
# comparison with a number in a reason and fails on one that is none of these.

#: A comparison word followed by a number (with its unit): the shape of a threshold in prose.
THRESHOLD_PATTERN = re.compile(
    r"(?<![\w-])(>=?|<=?|≥|≤|above|below|exceeds?|exceeding|more than|less than|fewer than|at least|at most|under)"
    r"\s+(?:±\s*)?(-?\d+(?:\.\d+)?)\s*(%|pp|percentage points?)?", re.I)

#: Comparisons in reasons that are not thresholds of a measure: results we report, facts of the mathematics.
#: (stem, claim id, the matched text) -> why.
NOT_THRESHOLDS = {
    ("01_si2022_macroce_qa", "resample_ice_pos_falls_ice_neg_rises", "< 1"): "tau < 1 is what sharpening means",
    ("01_si2022_macroce_qa", "ts_lowers_ice", "> 1 "): "tau > 1 is what flattening means",
    ("01_si2022_macroce_qa", "resample_ece_slope", "at least 0.20 "): "history: the criterion issue 26 replaced",
    ("01_si2022_macroce_qa", "app_e_n_barely_matters", "less than 1 "): "a result: how far the ConsCal variants move",
    ("02_baan2022_human_disagreement", "table5_roberta_ts", "above 7%"): "a result: the minimum of classwise-ECE over tau",
    ("02_baan2022_human_disagreement", "appb_entce_mean_vanilla", "more than 0.01"):
        "the paper's own spread: Table 1's ±0.02 on |EntCE|",
    ("02_baan2022_human_disagreement", "appb_entce_median_vanilla", "more than 0.01"):
        "the paper's own spread: Table 1's ±0.02 on |EntCE|",
    ("05_jiang2024_scalar_labels", "theorem1_gap_regret_bound", "<= 2 "): "the bound of the paper's theorem",
}


def _threshold_values(number: str, unit: str | None) -> set[float]:
    v = float(number)
    return {v, v / 100} if unit else {v}


def _allowed_values(item) -> set[float]:
    allowed = {0.0}
    if item.phrase is not None:
        from calibnb.record.reproduction import PHRASES

        allowed |= {b for b in PHRASES[item.phrase][1:] if math.isfinite(b)}
    if item.threshold is not None:
        allowed |= {b for b in item.threshold if math.isfinite(b)}
    if isinstance(item.paper, (int, float)) and not isinstance(item.paper, bool):
        allowed.add(float(item.paper))
    allowed |= {float(m["value"]) for m in item.measure_thresholds}
    return allowed


def unlabelled_thresholds(stem: str, item) -> list[str]:
    """The comparisons of ``item.reason`` whose number is neither the phrase table's, the claim's quoted threshold,
    the paper's value, a number of the claim's quote, nor a declared measure threshold."""
    allowed = _allowed_values(item)
    quoted = {float(x) for x in re.findall(r"\d+(?:\.\d+)?", item.quote)}
    out = []
    for m in THRESHOLD_PATTERN.finditer(item.reason):
        values = _threshold_values(m.group(2), m.group(3))
        if any(math.isclose(v, a, rel_tol=1e-9, abs_tol=1e-12) for v in values for a in allowed | quoted):
            continue
        if (stem, item.id, m.group(0)) in NOT_THRESHOLDS:
            continue
        out.append(m.group(0))
    return out


def test_every_number_that_defines_a_measure_is_quoted_ours_or_the_phrase_tables():
    problems = []
    for path in LEDGERS:
        for item in load_ledger(path).claims.values():
            for text in unlabelled_thresholds(path.stem, item):
                problems.append(f"{path.stem}: claim {item.id!r}: {text!r} in its reason")
    assert not problems, ("numbers that define a measure without the paper's words or our label (declare them in "
                          "measure_thresholds, with quote or ours, or use the phrase table):\n" + "\n".join(problems))


def test_the_exemptions_still_match_their_ledgers():
    for (stem, cid, text), why in NOT_THRESHOLDS.items():
        item = load_ledger(ROOT / "notebooks" / "claims" / f"{stem}.yaml").claims[cid]
        assert text in [m.group(0) for m in THRESHOLD_PATTERN.finditer(item.reason)], (stem, cid, text)
        assert len(why) > 10


def test_the_scan_catches_an_unlabelled_threshold_and_accepts_a_declared_one(tmp_path):
    path = tmp_path / "ledger.yaml"
    entry = ("paper: P\nnotebook: ledger\nclaims:\n- id: c\n  quote: several percent\n  locator: l\n  kind: count\n"
             "  rule: magnitude\n  phrase: usually\n  refuted_by: [0, 10]\n  sources: [s]\n  expected: reproduces\n"
             "  reason: a network counts when its KS exceeds 2%\n")
    path.write_text(entry)
    assert unlabelled_thresholds("ledger", load_ledger(path).claims["c"]) == ["exceeds 2%"]
    path.write_text(entry + "  measure_thresholds:\n  - {value: 0.02, defines: 'an over-confident network', "
                            "ours: 'our reading of several percent'}\n")
    item = load_ledger(path).claims["c"]
    assert unlabelled_thresholds("ledger", item) == []
    assert "our threshold: our reading of several percent" in criterion_text(item)
    # a declared threshold carries exactly one of quote and ours
    path.write_text(entry + "  measure_thresholds:\n  - {value: 0.02, defines: 'an over-confident network'}\n")
    with pytest.raises(LedgerError, match="field 'measure_thresholds'"):
        load_ledger(path)


def declared_quotes():
    for path in LEDGERS:
        for item in load_ledger(path).claims.values():
            for m in item.measure_thresholds:
                if m.get("quote"):
                    yield pytest.param(path.stem, item, m, id=f"{path.stem}:{item.id}:{m['value']:g}")


@pytest.mark.parametrize(("stem", "item", "declared"), list(declared_quotes()))
def test_every_quoted_measure_threshold_is_the_papers_words_and_shown(stem, item, declared):
    assert f"“{declared['quote']}”" in criterion_text(item)
    texts = paper_texts()
    if stem not in texts:
        pytest.skip("the papers' text is not on this machine (set CALIBNB_PAPERS_DIR)")
    missing = missing_fragments(declared["quote"], texts[stem])
    assert not missing, f"{stem}: claim {item.id!r}: the measure threshold's quote is not the paper's words: {missing}"


def test_every_measure_threshold_of_ours_is_labelled_ours_in_the_criterion():
    seen = 0
    for path in LEDGERS:
        for item in load_ledger(path).claims.values():
            for m in item.measure_thresholds:
                if m.get("ours"):
                    seen += 1
                    assert f"our threshold: {m['ours']}" in criterion_text(item), (path.stem, item.id)
                    # the results JSON's claim (what the report and the generated section read) says the same
                    assert criterion_text(item.to_dict()) == criterion_text(item), (path.stem, item.id)
    assert seen >= 5
