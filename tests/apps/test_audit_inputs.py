"""Inputs as people have them (issue 27, part 1): layouts of real scikit-learn outputs, and the bad-input classes.

Every layout either audits with the model's true accuracy or stops with an error that names the columns and the
flag that fixes it; none gives a silently wrong accuracy.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.linear_model import LogisticRegression

from calibnb.apps import audit
from calibnb.validation import check_sample_weight, check_unique_names, check_yaml_text


@pytest.fixture(scope="module")
def binary_model():
    """HistGradientBoosting-free but real: logistic regression on breast cancer, predict_proba[:, 1] + labels."""
    X, y = load_breast_cancer(return_X_y=True)
    m = LogisticRegression(max_iter=5000).fit(X[::2], y[::2])
    p = m.predict_proba(X[1::2])[:, 1]
    yt = y[1::2]
    return p, yt, float(((p >= 0.5) == yt).mean())


@pytest.fixture(scope="module")
def iris_model():
    X, y = load_iris(return_X_y=True)
    m = LogisticRegression(max_iter=5000).fit(X[::2], y[::2])
    P = m.predict_proba(X[1::2])
    yy = y[1::2]
    return P, yy, float((P.argmax(1) == yy).mean()), np.array(["setosa", "versicolor", "virginica"])


def load(df, **kw):
    return audit.load_predictions(df, **{"n_folds": 3, **kw})


# ------------------------------------------------------------------ layouts that audit correctly

@pytest.mark.parametrize("prob_name, label_name", [("y_prob", "y_true"), ("proba", "label"), ("y_score", "target")])
def test_binary_positive_probability_is_detected(binary_model, prob_name, label_name):
    p, yt, acc = binary_model
    d = load(pd.DataFrame({prob_name: p, label_name: yt}))
    assert d.kind == "multiclass" and d.n_classes == 2
    assert d.correct.mean() == pytest.approx(acc)
    np.testing.assert_allclose(d.conf, np.maximum(p, 1 - p))
    assert d.roles["binary_prob"] == prob_name and d.roles["label"] == label_name


def test_binary_by_flag_and_two_valued_text_labels(binary_model):
    p, yt, acc = binary_model
    df = pd.DataFrame({"score_pos": p, "gold": np.where(yt == 1, "benign", "malignant")})
    d = load(df, binary_prob="score_pos", label="gold", positive="benign")
    assert d.correct.mean() == pytest.approx(acc)
    # scikit-learn's convention: predict_proba[:, 1] is the second class in sorted order
    d = load(pd.DataFrame({"proba": 1 - p, "label": np.where(yt == 1, "benign", "malignant")}))
    assert d.roles["positive"] == "malignant" and d.correct.mean() == pytest.approx(acc)
    assert any("sorted order" in n for n in d.notes)


def test_binary_arrays(binary_model):
    p, yt, acc = binary_model
    assert audit.predictions_from_arrays(probs=p, labels=yt).correct.mean() == pytest.approx(acc)


def test_percent_by_flag(binary_model):
    p, yt, acc = binary_model
    d = load(pd.DataFrame({"y_prob": p * 100, "y_true": yt}), percent=True)
    assert d.correct.mean() == pytest.approx(acc)
    d = load(pd.DataFrame({"conf": np.maximum(p, 1 - p) * 100, "correct": (p >= .5) == yt}), percent=True)
    assert d.correct.mean() == pytest.approx(acc) and d.conf.max() <= 1


def test_class_named_columns_in_any_order(iris_model):
    P, yy, acc, names = iris_model
    df = pd.DataFrame({f"proba_{c}": P[:, j] for j, c in enumerate(names)})
    df["target"] = names[yy]
    d = load(df[["target", "proba_virginica", "proba_setosa", "proba_versicolor"]])
    assert d.correct.mean() == pytest.approx(acc)
    assert d.roles["classes"] == "virginica,setosa,versicolor"
    d2 = load(df, classes="setosa,versicolor,virginica", prob_columns="proba_setosa,proba_versicolor,proba_virginica")
    assert d2.correct.mean() == pytest.approx(acc)
    np.testing.assert_allclose(d2.probs, P / P.sum(1, keepdims=True))


def test_one_based_columns_and_text_labels_with_classes(iris_model):
    P, yy, acc, names = iris_model
    df = pd.DataFrame({f"p{j + 1}": P[:, j] for j in range(3)})
    df["label"] = yy + 1
    assert load(df).correct.mean() == pytest.approx(acc)
    df["label"] = yy
    assert load(df, classes="0,1,2").correct.mean() == pytest.approx(acc)
    df = pd.DataFrame({f"p{j}": P[:, j] for j in range(3)})
    df["label"] = names[yy]
    assert load(df, classes=",".join(names)).correct.mean() == pytest.approx(acc)
    d = load(pd.DataFrame({**{f"p{j}": P[:, j] for j in range(3)}, "y_true": yy, "y_pred": P.argmax(1)}))
    assert d.roles["label"] == "y_true" and any("'y_pred' (predicted labels) ignored" in n for n in d.notes)


# ------------------------------------------------------------------ ambiguous or suspicious: an error naming the fix

def test_the_issue_mapping_of_a_binary_model_is_refused(binary_model):
    """`--conf y_prob --correct y_true` reported the share of class 1 as the accuracy; now it names the flags."""
    p, yt, _ = binary_model
    with pytest.raises(audit.AuditInputError, match=r"'y_prob'.*below 0.5.*--binary-prob y_prob --label y_true"):
        load(pd.DataFrame({"y_prob": p, "y_true": yt}), conf="y_prob", correct="y_true")
    d = load(pd.DataFrame({"confidence": np.r_[np.full(60, .3), np.full(60, .9)], "correct": np.r_[[0, 1] * 60]}),
             low_conf=True)
    assert d.kind == "binary"


def test_flipped_positive_class_is_refused(binary_model):
    p, yt, _ = binary_model
    with pytest.raises(audit.AuditInputError, match=r"accuracy would be 0\.0\d+, below chance.*--positive benign"):
        load(pd.DataFrame({"proba": p, "label": np.where(yt == 1, "benign", "malignant")}))


def test_percent_is_suggested(binary_model):
    p, yt, _ = binary_model
    with pytest.raises(audit.AuditInputError, match=r"'y_prob'.*outside \[0, 1\].*pass --percent"):
        load(pd.DataFrame({"y_prob": p * 100, "y_true": yt}))


def test_text_labels_with_numbered_columns_need_classes(iris_model):
    P, yy, _, names = iris_model
    df = pd.DataFrame({f"p{j}": P[:, j] for j in range(3)})
    df["label"] = names[yy]
    with pytest.raises(audit.AuditInputError, match=r"'label'.*text.*p0\.\.p2.*--classes setosa,versicolor,virginica"):
        load(df)
    df = pd.DataFrame({f"p{j + 1}": P[:, j] for j in range(3)})
    df["label"] = yy
    with pytest.raises(audit.AuditInputError, match=r"'label'.*numbered from 1.*--classes"):
        load(df)


def test_duplicated_header(tmp_path, iris_model):
    P, yy, _, _ = iris_model
    path = tmp_path / "dup.csv"
    lines = ["p0,p1,p2,label,label"] + [f"{a},{b},{c},{y},{(y + 1) % 3}" for (a, b, c), y in zip(P, yy)]
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(audit.AuditInputError, match=r"'label'.*duplicated.*2 times.*rename"):
        audit.load_predictions(path, n_folds=3)
    df = pd.DataFrame(np.column_stack([P, yy, yy]), columns=["p0", "p1", "p2", "label", "label"])
    with pytest.raises(audit.AuditInputError, match="'label'.*duplicated"):
        load(df)
    with pytest.raises(ValueError, match="'label' appears 2 times"):
        check_unique_names(["label", "p0", "label"])


def test_ambiguous_label_names():
    df = pd.DataFrame({"y_prob": [.2, .8] * 20, "label": [0, 1] * 20, "target": [0, 1] * 20})
    with pytest.raises(audit.AuditInputError, match=r"label column is ambiguous.*--label"):
        load(df)


# ------------------------------------------------------------------ bad input classes of the issue

def test_nan_sum_tol_is_an_error(iris_model):
    P, yy, _, _ = iris_model
    df = pd.DataFrame({f"p{j}": P[:, j] for j in range(3)})
    df["label"] = yy
    for bad in (float("nan"), float("inf"), -1e-3, "x"):
        with pytest.raises(audit.AuditInputError, match="--sum-tol"):
            load(df, sum_tol=bad)


def test_complex_input_is_an_error(iris_model):
    P, yy, _, _ = iris_model
    df = pd.DataFrame({f"p{j}": P[:, j].astype(complex) for j in range(3)})
    df["label"] = yy
    with pytest.raises(audit.AuditInputError, match="'p0': complex value"):
        load(df)
    with pytest.raises(audit.AuditInputError, match="'conf': complex value"):
        audit.predictions_from_arrays(conf=np.full(40, 0.7 + 1j), correct=[0, 1] * 20)


def test_overflowing_and_non_finite_weights_are_errors():
    df = pd.DataFrame({"conf": np.r_[np.full(50, .9), np.full(50, .8)], "correct": [1, 0] * 50})
    with pytest.raises(audit.AuditInputError, match="'weight'.*largest float"):
        load(df.assign(weight=1e307))
    with pytest.raises(audit.AuditInputError, match="'weight'.*non-finite"):
        load(df.assign(weight=np.r_[np.inf, np.ones(99)]))
    with pytest.raises(ValueError, match="sample_weight sums to more than the largest float"):
        check_sample_weight(np.full(100, 1e307), (100,))


def test_header_only_blank_lines_and_multiline_fields(tmp_path):
    header_only = tmp_path / "h.csv"
    header_only.write_text("conf,correct\n")
    with pytest.raises(audit.AuditInputError, match="header .*but no rows"):
        audit.load_predictions(header_only)
    empty = tmp_path / "e.csv"
    empty.write_text("")
    with pytest.raises(audit.AuditInputError, match="empty"):
        audit.load_predictions(empty)
    rng = np.random.default_rng(0)
    conf = rng.uniform(0.5, 1, 60)
    df = pd.DataFrame({"conf": conf, "correct": (rng.uniform(size=60) < conf).astype(int),
                       "note": ["line one\nline two" if i % 7 == 0 else "x" for i in range(60)]})
    multi = tmp_path / "m.csv"
    df.to_csv(multi, index=False)
    multi.write_text(multi.read_text() + "\n\n\n")  # trailing blank lines
    d = audit.load_predictions(multi, n_folds=3)
    assert d.n == 60 and d.correct.mean() == pytest.approx(df.correct.mean())
    streamed = audit.load_from_parameters({"predictions_path": str(multi), "n_folds": 3, "stream_threshold": 10,
                                           "chunk_rows": 16, "subsample": 30}, progress=False)
    assert streamed.n == 60 and streamed.subsample_index.max() < 60
    np.testing.assert_array_equal(streamed.conf, d.conf)


def test_parquet_page_checksums_are_verified(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(1)
    conf = rng.uniform(0.5, 1, 2000)
    table = pa.table({"conf": conf, "correct": (rng.uniform(size=2000) < conf).astype(np.int8)})
    path = tmp_path / "p.parquet"
    pq.write_table(table, path, write_page_checksum=True, compression="NONE")
    assert audit.load_predictions(path).n == 2000
    raw = bytearray(path.read_bytes())
    pos = raw.find(conf[1000:1001].tobytes())  # a byte inside the first column's data page
    assert pos > 0
    raw[pos] ^= 0x10  # one flipped bit in a value
    bad = tmp_path / "flipped.parquet"
    bad.write_bytes(bytes(raw))
    with pytest.raises(audit.AuditInputError, match="CRC|checksum"):
        audit.load_predictions(bad)
    with pytest.raises(audit.AuditInputError, match="CRC|checksum"):
        audit.load_from_parameters({"predictions_path": str(bad), "stream_threshold": 10, "chunk_rows": 500},
                                   progress=False)


def test_yaml_is_size_and_alias_limited():
    laughs = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi"))
    assert len(laughs.encode()) < 1000  # expands to 9^9 items if loaded
    with pytest.raises(ValueError, match="72 YAML aliases"):
        check_yaml_text(laughs)
    with pytest.raises(ValueError, match="bytes; at most"):
        check_yaml_text("a: 1\n" * 100_000)
    assert check_yaml_text("all: {seed: 0}\n") == "all: {seed: 0}\n"


def test_report_params_file_is_alias_limited_before_parsing(tmp_path):
    from calibnb.apps.report import load_params_file

    f = tmp_path / "laughs.yaml"
    f.write_text("a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi")))
    with pytest.raises(ValueError, match="params file laughs.yaml uses 72 YAML aliases"):
        load_params_file(f)


def test_memory_is_bounded_by_max_rows_and_top1_metrics_stay_exact(tmp_path):
    """Above max_rows only a seeded sample of rows is held; accuracy, ECE, MacroCE, HMR are those of every row."""
    import calibnb as cn

    rng = np.random.default_rng(8)
    n, k = 3000, 4
    z = rng.normal(size=(n, k)) * 2
    p = np.exp(z) / np.exp(z).sum(1, keepdims=True)
    y = np.where(rng.uniform(size=n) < 0.7, p.argmax(1), rng.integers(0, k, n))
    df = pd.DataFrame({f"p{j}": p[:, j] for j in range(k)})
    df["label"] = y
    path = tmp_path / "big.parquet"
    df.to_parquet(path)
    params = {"predictions_path": str(path), "n_folds": 3, "stream_threshold": 10, "chunk_rows": 700,
              "subsample": 200, "max_rows": 500}
    pred = audit.load_from_parameters(params, progress=False)
    assert pred.n == 500 and pred.n_file == n and pred.probs.shape == (200, k)
    r = audit.run_audit(pred, n_resamples=20, heavy_resamples=5, n_folds=3, subsample=200)
    s = r["summary"].set_index("key")
    conf, correct = p.max(1), (p.argmax(1) == y).astype(float)
    assert s.loc["accuracy", "estimate"] == pytest.approx(correct.mean(), abs=1e-12)
    assert s.loc["ece_width", "estimate"] == pytest.approx(cn.ece(conf, correct, n_bins=15), abs=1e-12)
    assert s.loc["macro_ce", "estimate"] == pytest.approx(cn.macro_ce(conf, correct), abs=1e-12)
    assert s.loc["hmr", "rows"] == n and s.loc["nbr", "rows"] == 500
    assert r["inputs"]["rows"] == n and r["inputs"]["sample_rows"] == 500
    assert any("seeded sample of 500 rows" in note for note in r["inputs"]["notes"])
