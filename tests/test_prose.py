"""Prose computed or quoted (issue 26, item 6): static markdown never reports a number of ours.

A markdown cell of a paper notebook may state the paper's claims (in quotation marks) and explain methods; a
sentence that reports *our* result with a number is generated from the run (``IPython.display.Markdown``), so it
cannot contradict the run. This test scans the static markdown of every notebook with a claims ledger for
sentences that speak of our run ("we get", "ours", "our network", "in this run", ...) and carry a number outside
quotes, code, math and references (Table 5, §4.2, Eq. 3, Figure 1, years).
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
PAPER_NOTEBOOKS = sorted(p for p in NOTEBOOKS.glob("*.ipynb") if (NOTEBOOKS / "claims" / f"{p.stem}.yaml").exists())

_STRIP = [
    re.compile(r"```.*?```", re.S),                 # code blocks
    re.compile(r"`[^`]*`"),                        # code spans
    re.compile(r"\$\$.*?\$\$", re.S),               # display math
    re.compile(r"\$[^$]*\$"),                       # inline math
    re.compile(r"“[^”]*”"),                         # the paper's words, quoted
    re.compile(r'"[^"\n]*"'),
    re.compile(r"<[^>]+>"),                         # HTML tags
    re.compile(r"\]\([^)]*\)"),                     # link targets
]
_REFERENCE = re.compile(
    r"(Tables?|Figures?|Figs?\.|Eqs?\.|Equations?|§|Sections?|Appendix|App\.|Theorem|Definition|Axiom|Example|"
    r"Exercise|Step|Proposition|Lemma|Algorithm|Assumption|top|within-top|ECE|MCE|KS|seeds?|Notebook|notebook|"
    r"CIFAR|ResNet|Resnet|LeNet|DenseNet|WRN|Wide ResNet|VGG|ImageNet|SVHN|r\s*=|k\s*=|N\s*=|n\s*=)[\s-]*[A-Z]?\d+"
    r"([.,]\d+)*[a-z]?(\s*([-–,]|and|or)\s*\d+)*", re.I)
_COMPOUND = re.compile(r"\b[\w]*[A-Za-z][\w]*(-[\w]*\d[\w]*)+|\b\d+-[A-Za-z][\w-]*")  # ResNet-56, 20-bin
_YEAR = re.compile(r"\b(19|20)\d\d\b")
_NUMBER = re.compile(r"(?<![\w.])[-−+]?\d+(?:[.,]\d+)?\s*%?")
_OURS = re.compile(r"\b(we (get|got|find|found|measure|measured|obtain|obtained|see|saw|observe|observed)|ours\b|"
                   r"our (run|runs|value|values|network|networks|model|models|result|results|"
                   r"estimate|estimates|data)|in this run|this run|the run (gives|shows)|here (it|we|the))", re.I)


def result_sentences_with_numbers(text: str) -> list[str]:
    """Sentences of a markdown text that report a result of ours with a number (see the module docstring)."""
    lines = [line for line in text.splitlines() if not line.lstrip().startswith((">", "#", "|"))]
    body = "\n".join(lines)
    for pattern in _STRIP:
        body = pattern.sub(" ", body)
    out = []
    for sentence in re.split(r"(?<=[.!?])\s+|\n\s*\n|\n\s*[*-]\s", body):
        if not _OURS.search(sentence):
            continue
        cleaned = _YEAR.sub(" ", _COMPOUND.sub(" ", _REFERENCE.sub(" ", sentence)))
        if _NUMBER.search(cleaned):
            out.append(" ".join(sentence.split()))
    return out


def test_the_scan_finds_a_number_of_ours_and_spares_quotes_and_methods():
    assert result_sentences_with_numbers("On the CIFAR network we get an ECE of 0.42 after TS.")
    assert result_sentences_with_numbers("Ours is 3.2% lower than the paper's.")
    assert result_sentences_with_numbers("In this run MacroCE after TS is lowest at 50% accuracy.")
    assert not result_sentences_with_numbers("The paper reports “MacroCE 46.90 / 42.42 / 47.77” (Table 5).")
    assert not result_sentences_with_numbers("We use 10 equal-width bins, as in Table 5 of the paper.")
    assert not result_sentences_with_numbers("Our run's numbers are in the sentence the next cell generates.")
    assert not result_sentences_with_numbers("> our value was 0.3 in an old version\n")
    assert not result_sentences_with_numbers("Ours is computed by `cn.ece(conf, correct, n_bins=15)`.")
    assert not result_sentences_with_numbers("Tables 1 and 2 beside ours for our ResNet-56 and 20-bin histograms.")
    assert result_sentences_with_numbers("Our network (a ResNet-56) reaches 93.1% accuracy.")


@pytest.mark.parametrize("path", PAPER_NOTEBOOKS, ids=lambda p: p.stem)
def test_static_markdown_reports_no_number_of_ours(path):
    nb = nbformat.read(str(path), as_version=4)
    found = []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            found += [f"cell {cell.get('id')}: {s}" for s in result_sentences_with_numbers(cell.source)]
    assert not found, (f"{path.name}: static markdown reports our numbers; generate these sentences from the run "
                       "(IPython.display.Markdown) or quote the paper:\n" + "\n".join(found))
