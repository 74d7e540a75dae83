r"""Train small models for real: label smoothing and training dynamics (Si et al. 2022, §5.1-5.3).

Si et al. fine-tune DPR-BERT; their checkpoints are not public. This module
trains a small model on a data set that ships with scikit-learn (no
download), so that label smoothing (§5.1) and ConsCal (§5.2), which needs the
predictions of several checkpoints of one training run and of several
independently seeded runs, run on a real model's real checkpoints.

:func:`train_softmax_regression` is a NumPy multinomial logistic regression
trained by seeded mini-batch Adam, optionally with label smoothing, returning
the logits of every checkpoint on the given evaluation sets.
:func:`training_dynamics` wraps it for a bundled data set.

Why digits at 2 x 2 pixels: Si et al.'s QA models are right 25-40% of the time,
while a linear model on the full 8 x 8 digits is right about 96% of the time,
which leaves too few wrong predictions for MacroCE and ConsCal to say
anything. Averaging each image into 2 x 2 blocks of 4 x 4 pixels (4 features)
is an honest way to make the task hard: the labels are untouched (no label
noise), and a linear model reaches roughly 50-55% test accuracy.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from .validation import as_float_array, as_rng, seed_int, check_choice, check_labels, check_positive_int, check_scalar_in_range

__all__ = ["TrainingRun", "TrainingDynamics", "train_softmax_regression", "train_mlp", "training_dynamics", "load_bundled"]


@dataclass(frozen=True)
class TrainingRun:
    """Result of :func:`train_softmax_regression`.

    Attributes
    ----------
    epochs : ndarray of shape (C,)
        The epoch after which each checkpoint was taken (1-based).
    logits : dict of str -> ndarray of shape (C, N_set, K)
        Logits of every checkpoint on each evaluation set.
    train_loss : ndarray of shape (n_epochs,)
        Mean training loss (smoothed cross-entropy) of each epoch.
    weights, bias : ndarray
        The final parameters, shapes (n_features, K) and (K,).
    """

    epochs: np.ndarray
    logits: dict[str, np.ndarray]
    train_loss: np.ndarray
    weights: np.ndarray
    bias: np.ndarray

    def predictions(self, name: str) -> np.ndarray:
        """(N_set, C) table of each checkpoint's predicted class (the input of :class:`calibnb.ConsCal`)."""
        return self.logits[name].argmax(axis=2).T


def _check_X(X: Any, name: str) -> np.ndarray:
    x = as_float_array(X, name)
    if x.ndim != 2 or x.shape[0] == 0 or x.shape[1] == 0:
        raise ValueError(f"{name} must be a non-empty 2-D array (N, n_features); got shape {x.shape}.")
    bad = ~np.isfinite(x)
    if bad.any():
        i, j = np.unravel_index(int(np.flatnonzero(bad.ravel())[0]), x.shape)
        raise ValueError(f"{name} has {int(bad.sum())} value(s) that are NaN or infinite; first at index ({i}, {j}).")
    return x


def train_softmax_regression(
    X: Any,
    y: Any,
    *,
    label_smoothing: float = 0.0,
    epochs: int = 10,
    seed: Any = None,
    checkpoint_every: int = 1,
    eval_sets: Mapping[str, Any] | None = None,
    n_classes: int | None = None,
    learning_rate: float = 0.05,
    batch_size: int = 16,
    l2: float = 0.0,
) -> TrainingRun:
    r"""Multinomial logistic regression trained by seeded mini-batch Adam.

    Minimises the cross-entropy against label-smoothed targets (Si et al.
    2022, §5.1, App. B: "KL divergence with the label smoothed gold
    distribution", which differs from this loss by a constant):

    .. math:: L = -\frac1B\sum_{i \in \mathrm{batch}} \sum_k q_{ik} \log \mathrm{softmax}(x_i W + b)_k
              + \lambda \lVert W \rVert^2, \qquad
              q_{ik} = \begin{cases} 1 - \alpha & k = y_i \\ \alpha/(K-1) & k \ne y_i \end{cases}

    (Si et al. give the gold class :math:`1-\alpha` and the others
    :math:`\alpha/(|Y|-1)`; their "gold label probability α" is read as the
    smoothing mass.) The data are shuffled every epoch with ``seed``;
    weights start at zero, so a run is fully determined by ``seed``.

    Parameters
    ----------
    X : (N, n_features) array; y : (N,) int labels in [0, K)
    label_smoothing : float in [0, 1)
    epochs : int
    seed : None, int or numpy.random.Generator
    checkpoint_every : int
        A checkpoint is taken after every ``checkpoint_every`` epochs (and
        always after the last).
    eval_sets : mapping name -> (N_set, n_features) array, optional
        Sets whose logits are recorded at every checkpoint ("train" is
        always included).
    n_classes : int, optional
        K (default ``max(y) + 1``).
    learning_rate, batch_size, l2 :
        Adam step size, mini-batch size, L2 penalty on W.

    Returns
    -------
    TrainingRun

    References
    ----------
    .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". In Findings of the Association for Computational Linguistics: EMNLP 2022. §5.1.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 2)); y = (X[:, 0] > 0).astype(int)
    >>> run = train_softmax_regression(X, y, epochs=4, seed=0, checkpoint_every=2)
    >>> run.epochs.tolist(), run.logits["train"].shape
    ([2, 4], (2, 300, 2))
    >>> bool((run.predictions("train")[:, -1] == y).mean() > 0.95)
    True
    """
    x, labels, k, sets, opts = _check_train_args(X, y, n_classes, label_smoothing, epochs, checkpoint_every,
                                                 learning_rate, batch_size, l2, eval_sets)
    return _train_adam(x, labels, k, sets, as_rng(seed), hidden=0, **opts)


def _train_adam(x, labels, k, sets, rng, *, hidden, alpha, epochs, every, lr, bs, lam) -> TrainingRun:
    # seeded mini-batch Adam on smoothed cross-entropy; hidden = 0: softmax regression, else one tanh layer
    n, d = x.shape
    targets = np.full((n, k), alpha / (k - 1))
    targets[np.arange(n), labels] = 1.0 - alpha
    if hidden:
        # Glorot-uniform initial weights drawn from the run's generator (the non-convex case needs a random start)
        lim1, lim2 = np.sqrt(6.0 / (d + hidden)), np.sqrt(6.0 / (hidden + k))
        params = [rng.uniform(-lim1, lim1, (d, hidden)), np.zeros(hidden), rng.uniform(-lim2, lim2, (hidden, k)), np.zeros(k)]
    else:
        params = [np.zeros((d, k)), np.zeros(k)]

    def forward(a):
        if hidden:
            h = np.tanh(a @ params[0] + params[1])
            return h @ params[2] + params[3], h
        return a @ params[0] + params[1], None

    m = [np.zeros_like(p_) for p_ in params]
    v = [np.zeros_like(p_) for p_ in params]
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    step = 0
    ckpt_epochs: list[int] = []
    ckpt_logits: dict[str, list[np.ndarray]] = {name: [] for name in sets}
    losses = np.zeros(epochs)
    for epoch in range(1, epochs + 1):
        order = rng.permutation(n)
        total = 0.0
        for start in range(0, n, bs):
            idx = order[start : start + bs]
            xb, qb = x[idx], targets[idx]
            s, h = forward(xb)
            s = s - s.max(axis=1, keepdims=True)
            logp = s - np.log(np.exp(s).sum(axis=1, keepdims=True))
            total += float(-(qb * logp).sum())
            grad_s = (np.exp(logp) - qb) / idx.size
            if hidden:
                grad_h = (grad_s @ params[2].T) * (1.0 - h * h)
                grads = [xb.T @ grad_h + 2.0 * lam * params[0], grad_h.sum(axis=0),
                         h.T @ grad_s + 2.0 * lam * params[2], grad_s.sum(axis=0)]
            else:
                grads = [xb.T @ grad_s + 2.0 * lam * params[0], grad_s.sum(axis=0)]
            step += 1
            for j, (param, g) in enumerate(zip(params, grads)):
                m[j] = beta1 * m[j] + (1 - beta1) * g
                v[j] = beta2 * v[j] + (1 - beta2) * g * g
                mhat = m[j] / (1 - beta1**step)
                vhat = v[j] / (1 - beta2**step)
                param -= lr * mhat / (np.sqrt(vhat) + eps)
        losses[epoch - 1] = total / n
        if epoch % every == 0 or epoch == epochs:
            ckpt_epochs.append(epoch)
            for name, arr in sets.items():
                ckpt_logits[name].append(forward(arr)[0])
    return TrainingRun(
        epochs=np.array(ckpt_epochs),
        logits={name: np.stack(v_) for name, v_ in ckpt_logits.items()},
        train_loss=losses,
        weights=params[-2].copy(),
        bias=params[-1].copy(),
    )


def _check_train_args(X, y, n_classes, label_smoothing, epochs, checkpoint_every, learning_rate, batch_size, l2, eval_sets):
    x = _check_X(X, "X")
    n, d = x.shape
    if n_classes is not None:
        n_classes = check_positive_int(n_classes, "n_classes", minimum=2)
    labels = check_labels(y, n, n_classes, name="y", other="X")
    k = n_classes if n_classes is not None else max(int(labels.max()) + 1, 2)
    out = dict(
        alpha=check_scalar_in_range(label_smoothing, "label_smoothing", low=0.0, high=1.0, high_inclusive=False),
        epochs=check_positive_int(epochs, "epochs"),
        every=check_positive_int(checkpoint_every, "checkpoint_every"),
        lr=check_scalar_in_range(learning_rate, "learning_rate", low=0.0, low_inclusive=False),
        bs=check_positive_int(batch_size, "batch_size"),
        lam=check_scalar_in_range(l2, "l2", low=0.0),
    )
    sets = {"train": x}
    for name, arr in (eval_sets or {}).items():
        e = _check_X(arr, f"eval_sets[{name!r}]")
        if e.shape[1] != d:
            raise ValueError(f"eval_sets[{name!r}] has {e.shape[1]} features but X has {d}; they must match.")
        sets[name] = e
    return x, labels, k, sets, out


def train_mlp(
    X: Any,
    y: Any,
    *,
    hidden: int = 16,
    label_smoothing: float = 0.0,
    epochs: int = 10,
    seed: Any = None,
    checkpoint_every: int = 1,
    eval_sets: Mapping[str, Any] | None = None,
    n_classes: int | None = None,
    learning_rate: float = 0.01,
    batch_size: int = 16,
    l2: float = 0.0,
) -> TrainingRun:
    r"""A one-hidden-layer tanh network trained by seeded mini-batch Adam (non-convex).

    The same loss as :func:`train_softmax_regression` (cross-entropy against
    label-smoothed targets :math:`q`), on logits of a hidden layer of
    ``hidden`` tanh units:

    .. math:: z_i = 	anh(x_i W_1 + b_1)\,W_2 + b_2, \qquad
              L = -rac1B\sum_{i} \sum_k q_{ik} \log \mathrm{softmax}(z_i)_k
              + \lambda (\lVert W_1
Vert^2 + \lVert W_2 
Vert^2)

    :math:`W_1, W_2` start Glorot-uniform from ``seed`` (biases at zero), so
    independently seeded runs start in different places and end in different
    local minima: their checkpoints disagree because of training dynamics,
    not only optimiser noise (Si et al. 2022 §5.2 use DPR-BERT checkpoints).
    Parameters are those of :func:`train_softmax_regression` plus
    ``hidden`` (number of hidden units, >= 1). ``TrainingRun.weights`` and
    ``bias`` hold the output layer.

    References
    ----------
    .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". In Findings of the Association for Computational Linguistics: EMNLP 2022. §5.1-5.2.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 2)); y = (X[:, 0] * X[:, 1] > 0).astype(int)   # XOR: no linear model fits it
    >>> run = train_mlp(X, y, hidden=8, epochs=30, seed=0, checkpoint_every=10, learning_rate=0.02)
    >>> run.epochs.tolist(), run.logits["train"].shape
    ([10, 20, 30], (3, 400, 2))
    >>> bool((run.predictions("train")[:, -1] == y).mean() > 0.9)
    True
    """
    hidden = check_positive_int(hidden, "hidden")
    x, labels, k, sets, opts = _check_train_args(X, y, n_classes, label_smoothing, epochs, checkpoint_every,
                                                 learning_rate, batch_size, l2, eval_sets)
    return _train_adam(x, labels, k, sets, as_rng(seed), hidden=hidden, **opts)


_DATASETS = ("digits", "wine", "breast_cancer", "iris")


def load_bundled(dataset: str = "digits", *, resolution: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Features and labels of a data set bundled with scikit-learn (no download).

    ``"digits"`` images (8 x 8) are averaged into ``resolution x resolution``
    blocks (``resolution`` must divide 8; 8 keeps every pixel).

    >>> X, y = load_bundled("digits", resolution=2)
    >>> X.shape, int(y.max())
    ((1797, 4), 9)
    """
    from sklearn import datasets

    check_choice(dataset, _DATASETS, "dataset")
    if dataset == "digits":
        resolution = check_positive_int(resolution, "resolution")
        if 8 % resolution:
            raise ValueError(f"resolution must divide 8 (1, 2, 4 or 8); got {resolution}.")
        X, y = datasets.load_digits(return_X_y=True)
        block = 8 // resolution
        X = X.reshape(-1, resolution, block, resolution, block).mean(axis=(2, 4)).reshape(len(y), -1)
        return X, y
    loader = {"wine": datasets.load_wine, "breast_cancer": datasets.load_breast_cancer, "iris": datasets.load_iris}
    X, y = loader[dataset](return_X_y=True)
    return X.astype(np.float64), y


@dataclass(frozen=True)
class TrainingDynamics:
    """Checkpoints of one run and final predictions of independent runs (see :func:`training_dynamics`).

    Attributes
    ----------
    dataset : str
    n_classes : int
    epochs : ndarray (C,)
        Epoch of each checkpoint of the main run.
    labels : dict "dev"/"test" -> (N,) int
    checkpoint_logits : dict "dev"/"test" -> (C, N, K)
        Logits of each checkpoint of the main run.
    checkpoint_predictions : dict "dev"/"test" -> (N, C)
        Predicted class per checkpoint; the last column is the final model.
    run_logits : dict "dev"/"test" -> (S, N, K)
        Final logits of S independently seeded runs.
    run_predictions : dict "dev"/"test" -> (N, S)
        Their predicted classes (input of ``ConsCal.without_training_dynamics``).
    checkpoint_accuracy : dict "dev"/"test" -> (C,)
    seeds : dict
        The seeds actually used (main run, independent runs, split).
    epoch_predictions : dict "dev"/"test" -> (N, E)
        Predicted class of the main run after every epoch 1..E (E = C x
        epochs per checkpoint); :meth:`spaced_checkpoints` takes other N from it.
    model : str
        ``"softmax regression"`` or ``"MLP (h tanh units)"``.
    """

    dataset: str
    n_classes: int
    epochs: np.ndarray
    labels: dict[str, np.ndarray]
    checkpoint_logits: dict[str, np.ndarray]
    checkpoint_predictions: dict[str, np.ndarray]
    run_logits: dict[str, np.ndarray]
    run_predictions: dict[str, np.ndarray]
    checkpoint_accuracy: dict[str, np.ndarray]
    seeds: dict[str, Any] = field(default_factory=dict)
    epoch_predictions: dict[str, np.ndarray] = field(default_factory=dict)
    model: str = "softmax regression"

    def spaced_checkpoints(self, n_checkpoints: int, split: str = "test") -> np.ndarray:
        """(N, n_checkpoints) predictions of the SAME main run at evenly spaced epochs ending at its last epoch.

        Only the number of checkpoints changes; the final model (last column)
        is the one of :attr:`checkpoint_predictions` (Si et al. 2022, App. E).
        Epoch ``round(E * j / n)`` for ``j = 1..n``; ``n`` must not exceed E.
        """
        n_checkpoints = check_positive_int(n_checkpoints, "n_checkpoints")
        check_choice(split, tuple(self.epoch_predictions), "split")
        table = self.epoch_predictions[split]
        n_epochs = table.shape[1]
        if n_checkpoints > n_epochs:
            raise ValueError(f"n_checkpoints must be at most the {n_epochs} epochs of the main run; got {n_checkpoints}.")
        epochs = np.round(np.arange(1, n_checkpoints + 1) * n_epochs / n_checkpoints).astype(int)
        return table[:, epochs - 1]


def training_dynamics(
    dataset: str = "digits",
    *,
    n_checkpoints: int = 5,
    n_seeds: int = 5,
    seed: Any = None,
    epochs_per_checkpoint: int = 2,
    label_smoothing: float = 0.0,
    resolution: int = 2,
    split: tuple[float, float] = (0.25, 0.25),
    learning_rate: float = 0.1,
    batch_size: int = 16,
    hidden: int = 0,
) -> TrainingDynamics:
    r"""Train a small model on a bundled data set and return real training dynamics.

    A seeded split puts ``split[0]`` of the data in dev, ``split[1]`` in test
    and the rest in train; features are standardised with the training mean
    and standard deviation. One main run (seed ``seed``) is trained for
    ``n_checkpoints * epochs_per_checkpoint`` epochs with a checkpoint every
    ``epochs_per_checkpoint`` epochs: its per-checkpoint predictions are
    ConsCal's input (Si et al. 2022 §5.2, N = 5 checkpoints). ``n_seeds``
    further runs with independent seeds give the final predictions for
    "ConsCal w/o training dynamics" (§5.3). See the module docstring for why
    the default is digits at 2 x 2 pixels. ``hidden = 0`` trains softmax
    regression (:func:`train_softmax_regression`, convex); ``hidden > 0`` a
    one-hidden-layer tanh network (:func:`train_mlp`, non-convex).

    .. math:: \hat y^{(c)}_i = \arg\max_k (x_i W^{(c)} + b^{(c)})_k, \quad c = 1..C

    References
    ----------
    .. [1] Chenglei Si, Chen Zhao, Sewon Min, Jordan Boyd-Graber. 2022. "Re-Examining Calibration: The Case of Question Answering". In Findings of the Association for Computational Linguistics: EMNLP 2022. §5.2.

    Examples
    --------
    >>> td = training_dynamics(n_checkpoints=3, n_seeds=2, seed=0)
    >>> td.checkpoint_predictions["dev"].shape[1], td.run_predictions["test"].shape[1]
    (3, 2)
    >>> bool(0.4 < td.checkpoint_accuracy["test"][-1] < 0.7)
    True
    >>> td.spaced_checkpoints(3, "dev").shape == td.checkpoint_predictions["dev"].shape
    True
    """
    n_checkpoints = check_positive_int(n_checkpoints, "n_checkpoints")
    n_seeds = check_positive_int(n_seeds, "n_seeds")
    per = check_positive_int(epochs_per_checkpoint, "epochs_per_checkpoint")
    try:
        f_dev, f_test = split
    except (TypeError, ValueError):
        raise TypeError(f"split must be a pair (dev fraction, test fraction); got {split!r}.") from None
    f_dev = check_scalar_in_range(f_dev, "split[0]", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    f_test = check_scalar_in_range(f_test, "split[1]", low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    if f_dev + f_test >= 1.0:
        raise ValueError(f"split leaves no training data: dev {f_dev:g} + test {f_test:g} >= 1.")
    X, y = load_bundled(dataset, resolution=resolution)
    n_classes = int(y.max()) + 1
    seed_value = seed_int(seed)
    seq = np.random.SeedSequence(seed_value)
    split_seq, main_seq, *run_seqs = seq.spawn(2 + n_seeds)
    perm = np.random.default_rng(split_seq).permutation(len(y))
    n_dev, n_test = int(round(f_dev * len(y))), int(round(f_test * len(y)))
    parts = {"dev": perm[:n_dev], "test": perm[n_dev : n_dev + n_test]}
    train = perm[n_dev + n_test :]
    mean, std = X[train].mean(axis=0), X[train].std(axis=0)
    std = np.where(std > 0, std, 1.0)
    Z = (X - mean) / std
    evals = {name: Z[idx] for name, idx in parts.items()}
    hidden = check_scalar_in_range(hidden, "hidden", low=0)
    if int(hidden) != hidden:
        raise ValueError(f"hidden must be a whole number of units (0 = softmax regression); got {hidden!r}.")
    hidden = int(hidden)
    common = dict(
        label_smoothing=label_smoothing, eval_sets=evals, n_classes=n_classes,
        learning_rate=learning_rate, batch_size=batch_size,
    )

    def fit(every, rng):
        total = n_checkpoints * per
        if hidden:
            return train_mlp(Z[train], y[train], hidden=hidden, epochs=total, checkpoint_every=every, seed=rng, **common)
        return train_softmax_regression(Z[train], y[train], epochs=total, checkpoint_every=every, seed=rng, **common)

    # the main run keeps every epoch; its N checkpoints are every `per`-th epoch
    main = fit(1, np.random.default_rng(main_seq))
    keep = np.flatnonzero(main.epochs % per == 0)
    runs = [fit(n_checkpoints * per, np.random.default_rng(s)) for s in run_seqs]
    labels = {name: y[idx] for name, idx in parts.items()}
    epoch_pred = {name: main.predictions(name) for name in parts}
    ckpt_pred = {name: epoch_pred[name][:, keep] for name in parts}
    return TrainingDynamics(
        dataset=dataset,
        n_classes=n_classes,
        epochs=main.epochs[keep],
        labels=labels,
        checkpoint_logits={name: main.logits[name][keep] for name in parts},
        checkpoint_predictions=ckpt_pred,
        run_logits={name: np.stack([r.logits[name][-1] for r in runs]) for name in parts},
        run_predictions={name: np.stack([r.logits[name][-1].argmax(axis=1) for r in runs], axis=1) for name in parts},
        checkpoint_accuracy={name: (ckpt_pred[name] == labels[name][:, None]).mean(axis=0) for name in parts},
        seeds={"seed": seed_value, "entropy": seq.entropy},
        epoch_predictions=epoch_pred,
        model=f"MLP ({hidden} tanh units)" if hidden else "softmax regression",
    )
