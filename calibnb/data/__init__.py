"""Loaders for the real data the notebooks use, and the project's own small data.

Third-party files are never committed: ``data/manifest.json`` records where each
comes from (URL, commit, checksums, licence), and :func:`fetch` finds it in the
cache folder (``cache_dir``, else ``$CALIBNB_DATA_DIR``, else
``~/.cache/calibnb``) or downloads and verifies it. See ``data/README.md``.

Also here: a labelled simulator of open-domain QA candidates
(:func:`simulate_odqa`) and vote sub-sampling (:func:`subsample_votes`). The
checkpoints of a small trained model are :func:`calibnb.papers.si2022.training_dynamics`.
"""

from ._arrays import UnsafePickleError
from ._registry import (
    ChecksumMismatchError, DataUnavailableError, data_dir, fetch, manifest_entry, registry,
)
from ._registry import BROWSER_DATA_DIR, UPLOAD_DIR, add_data_file, browser_file, in_browser, project_data_path, upload_widget
from ._loaders import (
    NLI_CLASSES, QA_EXPERTS, ChaosNLI, ChaosNLIPredictions, CifarOutputs, calibration_test_split,
    chaosnli_prediction_models, cifar_models, load_chaosnli, load_chaosnli_predictions, load_cifar,
    load_cifar10h, load_codex_triviaqa, load_qa_confidences, load_qa_dev_confidences, qa_datasets, read_text,
)
from ._simulate import SimulatedODQA, simulate_odqa
from ._votes import subsample_votes
from ..scale.scan import open_predictions, scan_predictions

__all__ = [
    # the data registry
    "data_dir", "fetch", "manifest_entry", "registry", "ChecksumMismatchError", "DataUnavailableError",
    "UnsafePickleError", "read_text",
    # the browser kernel (the JupyterLite site of `make site`): the site's data folder
    "BROWSER_DATA_DIR", "in_browser", "project_data_path",
    # files the site may not carry, uploaded by the student and verified against the manifest
    "UPLOAD_DIR", "browser_file", "add_data_file", "upload_widget",
    # loaders of real data
    "NLI_CLASSES", "QA_EXPERTS", "ChaosNLI", "ChaosNLIPredictions", "CifarOutputs", "load_chaosnli",
    "chaosnli_prediction_models", "load_chaosnli_predictions", "cifar_models", "load_cifar",
    "calibration_test_split", "load_cifar10h", "qa_datasets", "load_qa_confidences", "load_qa_dev_confidences",
    "load_codex_triviaqa",
    # simulators and vote sub-sampling
    "SimulatedODQA", "simulate_odqa", "subsample_votes",
    # streaming reader of large prediction logs (Parquet -> calibnb.CalibrationStats)
    "open_predictions",
    "scan_predictions",
]
