"""Every panel factory in a real IPython kernel, driven the way JupyterLab drives it.

For each factory the test starts (once per module) a kernel with
``jupyter_client``, builds the panel on small data and displays it, then sends
the kernel a ``comm_msg`` ``update`` for one control's model -- the very message
the browser sends when a student moves a slider -- and collects what the kernel
publishes on iopub in answer to that message. The last image shown must equal a
fresh render of a new panel set to the new value (and differ from the render at
the old value), and the last readout shown must equal that panel's readout.
This is what failed when ``build_panel`` displayed the figure before redrawing it
(every figure lagged one move behind its slider).

The kernel runs with the inline backend, as in JupyterLab, and with
``CALIBNB_PANELS`` unset (live widgets).
"""

from __future__ import annotations

import base64
import io
import json
import os
import queue
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

jupyter_client = pytest.importorskip("jupyter_client")
from jupyter_client.manager import start_new_kernel  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 120.0

# Small data every case can use (defined in the kernel).
SETUP = """
%matplotlib inline
import json, base64
import numpy as np
from IPython.display import display
from IPython.core.pylabtools import print_figure
import calibnb.widgets as W
from calibnb.papers import baan2022, jiang2024, si2022

rng = np.random.default_rng(0)
conf = rng.beta(5, 1, 300)
correct = rng.uniform(size=300) < conf ** 3
logits = rng.normal(size=(200, 3)) * 2
counts = rng.multinomial(25, [0.5, 0.3, 0.2], size=200)
nli_probs = {"model a": rng.dirichlet([4, 2, 1], size=200), "model b": rng.dirichlet([1, 1, 1], size=200)}
sakai_x = np.array([0.4, 0.4, 0.4, 0.6, 0.6, 0.6, 0.8, 0.8, 0.8])
sakai_y = np.array([1, 1, 0, 1, 0, 1, 1, 1, 1])
final = rng.integers(0, 4, size=400)
checkpoints = np.where(rng.uniform(size=(400, 5)) < 0.6, final[:, None], rng.integers(0, 4, size=(400, 5)))
checkpoints[:, -1] = final
labels = np.where(rng.uniform(size=400) < 0.7, final, rng.integers(0, 4, size=400))
threshold_table = si2022.conscal_threshold_data(checkpoints[:200], final[:200] == labels[:200],
                                                checkpoints[200:], final[200:] == labels[200:])


def _shown(panel):
    view = panel.readout_view() if hasattr(panel, "readout_view") else panel.readout
    fmt = get_ipython().display_formatter.format(view)[0]
    return {"png": base64.b64encode(print_figure(panel.figure, "png", bbox_inches="tight")).decode(),
            "readout": fmt["text/plain"]}
"""

#: factory -> (code building the panel from the setup's data, control to move, new value).
CASES = {
    "temperature_explorer": ("W.temperature_explorer(conf, correct, n_bins=10)", "temperature", 2.5),
    "binning_explorer": ("W.binning_explorer(conf, correct, n_bins=10)", "n_bins", 4),
    "binning_explorer-toggle": ("W.binning_explorer(conf, correct, n_bins=10)", "binning", "mass"),
    "perturbation_explorer": ("W.perturbation_explorer(sakai_x, sakai_y, instance=7, n_bins=3, binning='mass')",
                              "new_conf", 0.7),
    "perturbation_explorer-instance": ("W.perturbation_explorer(sakai_x, sakai_y, instance=7, n_bins=3, "
                                       "binning='mass')", "instance", 3),
    "human_temperature_explorer": ("baan2022.human_temperature_explorer(logits, counts)", "temperature", 2.0),
    "votes_explorer": ("baan2022.votes_explorer(nli_probs['model a'], counts, seed=0)", "n_votes", 5),
    "f_neutral_explorer": ("jiang2024.f_neutral_explorer(nli_probs, counts)", "f_neutral", 0.2),
    "ece_bins_explorer": ("jiang2024.ece_bins_explorer(nli_probs, counts, n_bins=5)", "n_bins", 12),
    "resampling_explorer": ("si2022.resampling_explorer(conf, correct, seed=0)", "accuracy", 0.3),
    "conscal_explorer": ("si2022.conscal_explorer(threshold_table, n=1)", "n", 3),
}


class Kernel:
    """One kernel, with helpers to execute code and to send widget updates as a browser does."""

    def __init__(self) -> None:
        env = dict(os.environ)
        env.pop("CALIBNB_PANELS", None)
        env.pop("MPLBACKEND", None)  # the kernel's default, as in JupyterLab
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        self.km, self.kc = start_new_kernel(kernel_name="python3", startup_timeout=TIMEOUT, env=env,
                                            cwd=str(ROOT))

    def stop(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)

    def _collect(self, msg_id: str) -> list[dict]:
        """iopub messages whose parent is ``msg_id``, up to the kernel's idle status for it."""
        out: list[dict] = []
        deadline = time.monotonic() + TIMEOUT
        while True:
            try:
                msg = self.kc.get_iopub_msg(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no idle status from the kernel within {TIMEOUT} s") from None
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            out.append(msg)
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                return out

    def execute(self, code: str) -> list[dict]:
        msg_id = self.kc.execute(textwrap.dedent(code))
        msgs = self._collect(msg_id)
        errors = [m["content"] for m in msgs if m["msg_type"] == "error"]
        assert not errors, "\n".join("\n".join(e["traceback"]) for e in errors)
        return msgs

    def value(self, expr: str):
        """``json.loads`` of what ``print(json.dumps(expr))`` prints in the kernel."""
        msgs = self.execute(f"print(json.dumps({expr}))")
        text = "".join(m["content"]["text"] for m in msgs if m["msg_type"] == "stream")
        return json.loads(text)

    def move(self, model_id: str, state: dict) -> list[dict]:
        """Send the ``comm_msg`` a widget view sends when the user changes it; return the answer."""
        content = {"comm_id": model_id, "data": {"method": "update", "state": state, "buffer_paths": []}}
        msg = self.kc.session.msg("comm_msg", content)
        self.kc.shell_channel.send(msg)
        return self._collect(msg["header"]["msg_id"])


@pytest.fixture(scope="module")
def kernel():
    k = Kernel()
    try:
        k.execute(SETUP)
        yield k
    finally:
        k.stop()


def _pixels(b64png: str) -> np.ndarray:
    import matplotlib.image as mpimg

    return mpimg.imread(io.BytesIO(base64.b64decode(b64png)), format="png")


def _same_image(a: str, b: str) -> bool:
    pa, pb = _pixels(a), _pixels(b)
    return pa.shape == pb.shape and np.array_equal(pa, pb)


def _shown(msgs: list[dict]) -> tuple[list[str], list[str]]:
    """(PNG images, plain-text tables) displayed in ``msgs``, in order.

    A panel shows its figure and readout by setting its output widget's
    ``outputs`` state (a ``comm_msg`` update to the frontend); display messages
    are read too, for code that displays directly.
    """
    images, texts = [], []

    def add(data: dict) -> None:
        if "image/png" in data:
            images.append(data["image/png"])
        elif "data:image/png;base64," in data.get("text/html", ""):  # a readout beside its figure (beside=True)
            images.append(data["text/html"].split("data:image/png;base64,", 1)[1].split('"', 1)[0])
            texts.append(data["text/plain"])
        elif "text/html" in data and "text/plain" in data:
            texts.append(data["text/plain"])

    for m in msgs:
        if m["msg_type"] in ("display_data", "update_display_data", "execute_result"):
            add(m["content"]["data"])
        elif m["msg_type"] == "comm_msg":
            state = m["content"]["data"].get("state", {})
            for output in state.get("outputs", ()):
                add(output.get("data", {}))
    return images, texts


@pytest.mark.xdist_group("panels_kernel")  # one worker starts the module's kernel once (issue 31)
def test_a_panel_asks_the_client_for_nothing_while_its_cell_runs(kernel):
    """No output capture (msg_id) on the panel's Output: a headless client would answer it on the shell.

    ``with output:`` sets the Output's ``msg_id``; nbclient (papermill, nbval) then sends every
    captured output back to the kernel as a ``comm_msg`` while the cell runs, and under
    ipykernel 7 such a burst left the next request unread (issue 30's headless hang).
    """
    msgs = kernel.execute("panel = W.temperature_explorer(conf, correct)\ndisplay(panel)\n"
                          "_ = panel.update(temperature=2.0)")
    captures = [m for m in msgs if m["msg_type"] == "comm_msg"
                and "msg_id" in m["content"]["data"].get("state", {})]
    assert captures == [], "a panel set its Output's msg_id (output capture) while its cell ran"
    images, texts = _shown(msgs)
    assert images and texts, "the panel showed nothing"


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.xdist_group("panels_kernel")  # one worker starts the module's kernel once (issue 31)
def test_panel_in_a_kernel_shows_the_figure_of_the_value_just_set(kernel, case):
    build, control, new = CASES[case]
    kernel.execute(f"panel = {build}\nfresh = {build}")
    old = kernel.value(f"panel.controls[{control!r}].value")
    assert old != new, "the case must move the control"

    at_start = kernel.value("_shown(fresh)")
    kernel.execute("display(panel)")
    model_id = kernel.value(f"panel.controls[{control!r}].model_id")
    # A slider's view sends its new value; an option control (toggle buttons) sends the option's index.
    state = kernel.value(f"{{'index': list(panel.controls[{control!r}]._options_values).index({new!r})}} "
                         f"if hasattr(panel.controls[{control!r}], 'options') else {{'value': {new!r}}}")
    answer = kernel.move(model_id, state)
    errors = [m["content"] for m in answer if m["msg_type"] == "error"]
    assert not errors, errors
    assert kernel.value(f"panel.controls[{control!r}].value") == new

    expected = kernel.value(f"(fresh.update({control}={new!r}), _shown(fresh))[1]")
    images, texts = _shown(answer)
    assert images, f"moving {control} showed no figure"
    assert texts, f"moving {control} showed no readout"
    if not _same_image(images[-1], expected["png"]):
        lag = _same_image(images[-1], at_start["png"])
        pytest.fail(f"after moving {control} from {old!r} to {new!r} the panel shows "
                    + ("the figure of the OLD value (it lags one move)" if lag else "a figure of neither value"))
    assert not _same_image(expected["png"], at_start["png"]), "the figure does not depend on the control"
    assert texts[-1] == expected["readout"], f"readout shown:\n{texts[-1]}\nexpected:\n{expected['readout']}"

    # Shown as soon as displayed: the figure and readout of the start value, without any move.
    msgs = kernel.execute("display(panel)")
    assert any("application/vnd.jupyter.widget-view+json" in m["content"].get("data", {})
               for m in msgs if m["msg_type"] == "display_data"), "display(panel) showed no widget"
    built = kernel.execute(f"panel = {build}")  # what building the panel sent to its output
    images, texts = _shown(built)
    assert images and _same_image(images[-1], at_start["png"]), "a new panel does not show its figure"
    assert texts and texts[-1] == at_start["readout"], "a new panel does not show its readout"

    # panel.update(...) from Python refreshes the panel that is on screen too.
    kernel.execute("display(panel)")
    refreshed = kernel.execute(f"_ = panel.update({control}={new!r})")
    images, texts = _shown(refreshed)
    assert images and _same_image(images[-1], expected["png"]), "update() from Python did not refresh the panel"
    assert texts and texts[-1] == expected["readout"]
    assert kernel.value(f"panel.controls[{control!r}].value") == new  # the control follows


def test_every_panel_factory_has_a_kernel_case():
    import importlib
    import pkgutil

    import calibnb.papers
    import calibnb.widgets

    modules = [calibnb.widgets] + [importlib.import_module(f"calibnb.papers.{m.name}")
                                   for m in pkgutil.iter_modules(calibnb.papers.__path__)]
    factories = {name for module in modules for name in getattr(module, "__all__", dir(module))
                 if name.endswith("_explorer")}
    assert len(factories) >= 9
    covered = {case.split("-")[0] for case in CASES}
    assert factories <= covered, f"panel factories without a real-kernel case: {sorted(factories - covered)}"
