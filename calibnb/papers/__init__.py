"""Code that one notebook uses: one module per reproduced paper.

* :mod:`calibnb.papers.si2022` -- Si et al. 2022, MacroCE and ConsCal for QA (notebook 01).
* :mod:`calibnb.papers.baan2022` -- Baan et al. 2022, calibration to human disagreement (notebook 02).
* :mod:`calibnb.papers.gupta2021` -- Gupta et al. 2021, KS error and spline recalibration (notebook 03).
* :mod:`calibnb.papers.sakai2024` -- Sakai 2024, HMR and the worked examples (notebook 04).
* :mod:`calibnb.papers.jiang2024` -- Jiang, Liu, Van Durme 2024, scalar labels (notebook 05).

Import a paper module explicitly (``from calibnb.papers import si2022 as paper``);
nothing here is re-exported by :mod:`calibnb`. A function that a second notebook
needs, or that is useful on a user's own data, moves to the generic layer.

Each paper module is imported when first asked for (PEP 562), not with the
package: a notebook then loads its own paper's code only. Importing all five
took 0.9 s of CPU here (baan2022 brings scikit-learn and scipy.stats), which
notebook 04, whose module needs neither, paid in every kernel (issue 31).
"""

import importlib

__all__ = ["si2022", "baan2022", "gupta2021", "sakai2024", "jiang2024"]


def __getattr__(name):
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")  # also binds it here: later lookups are plain
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
