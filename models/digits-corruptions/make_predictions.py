"""Regenerate ``predictions.csv.gz``: a dataset-shift benchmark after Ovadia et al. (2019).

Scikit-learn's digits under six corruption types at five intensities, plus the clean test set
and an out-of-distribution (OOD) set, each scored by four uncertainty methods, as in
"Can you trust your model's uncertainty? Evaluating predictive uncertainty under dataset
shift" (Ovadia et al., NeurIPS 2019), shrunk to 8x8 images so that it runs offline in about
a minute on a laptop.

Recipe (deterministic; ``python models/digits-corruptions/make_predictions.py``; needs
scikit-learn, scipy, PyMC and Pillow, no network):

1. Split the 1,797 images of ``load_digits()`` stratified by digit
   (``train_test_split(random_state=0)``): 900 for training, 300 for validation (used only
   by temperature scaling) and 597 held out for testing. Pixels are divided by 16.
2. Methods (column ``method``):

   * ``vanilla``: one ``MLPClassifier(hidden_layer_sizes=(32,), alpha=1e-4)`` (seed 0,
     Adam, early stopping off, 300 epochs at most);
   * ``temp-scaling``: the same network with its log-probabilities divided by a temperature
     T fitted by minimising the validation NLL (Guo et al. 2017); T is in ``card.json``;
   * ``ensemble``: the average of the probability vectors of 5 such networks with seeds
     0..4 (a deep ensemble, Lakshminarayanan et al. 2017; member 0 is ``vanilla``);
   * ``bayes-logreg``: a Bayesian multinomial logistic regression fitted with PyMC by ADVI
     (weights and intercepts Normal(0, 1) on the standardised pixels, 10,000 Adam steps
     with learning rate 0.01, ``random_seed=0``); its predictive probabilities average the softmax over 400 draws
     of the fitted approximation.
3. Shifted sets (columns ``corruption`` and ``intensity``, 1 mild .. 5 severe), each
   corruption seeded by ``numpy.random.default_rng(SEED + 100 * type + intensity)``; pixel
   values are clipped to 0..16 afterwards:

   * ``gaussian-noise``: additive N(0, sd^2), sd = 1.5, 3, 4.5, 6, 8;
   * ``gaussian-blur``: ``scipy.ndimage.gaussian_filter`` with sigma 0.4, 0.6, 0.8, 1.0, 1.3;
   * ``rotation``: by 10, 20, 30, 45, 60 degrees, clockwise or anticlockwise at random;
   * ``translation``: by 0.5, 1, 1.5, 2, 3 pixels in a random direction (bilinear);
   * ``contrast``: pixel - mean scaled by 0.6, 0.45, 0.3, 0.2, 0.1 around each image's mean;
   * ``salt-and-pepper``: 3, 6, 10, 15, 20 % of the pixels set to 0 or 16 at random.

   The clean test set has ``corruption = none`` and ``intensity = 0``.
4. OOD set: 500 8x8 grey patches of scikit-learn's bundled photographs (the recipe of
   ``models/digits-shift``), with ``corruption = ood``, ``intensity = 0`` and no label.

Columns: ``item_id`` (``<corruption>-<intensity>/<method>/<source>``), ``label``, ``p_0``
.. ``p_9`` (rounded to ``DECIMALS`` decimals, rows re-normalised), ``corruption``,
``intensity``, ``method``. Rounding sets probabilities below 0.5e-4 to 0, which raises the NLL
of confidently wrong items (the 1e-8 softening then caps -log p at 18.4); ``card.json``
records the NLL of the unrounded probabilities beside the file's.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SPLIT_SEED = 0
N_TRAIN, N_VALID = 900, 300
HIDDEN = (32,)
ENSEMBLE_SEEDS = (0, 1, 2, 3, 4)
ADVI_ITERATIONS = 10_000
ADVI_DRAWS = 400
CORRUPTION_SEED = 20191208
N_OOD = 500
DECIMALS = 4
METHODS = ("vanilla", "temp-scaling", "ensemble", "bayes-logreg")
INTENSITIES = {
    "gaussian-noise": (1.5, 3.0, 4.5, 6.0, 8.0),
    "gaussian-blur": (0.4, 0.6, 0.8, 1.0, 1.3),
    "rotation": (10.0, 20.0, 30.0, 45.0, 60.0),
    "translation": (0.5, 1.0, 1.5, 2.0, 3.0),
    "contrast": (0.6, 0.45, 0.3, 0.2, 0.1),
    "salt-and-pepper": (0.03, 0.06, 0.10, 0.15, 0.20),
}


def _recipe(folder: str):
    """The generator module of another zoo entry (shared helpers, same conventions)."""
    path = HERE.parent / folder / "make_predictions.py"
    spec = importlib.util.spec_from_file_location(f"{folder.replace('-', '_')}_recipe", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_split():
    """(x_train, y_train, x_valid, y_valid, x_test, y_test, test_rows) on the 0..16 scale."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    rows = np.arange(digits.target.shape[0])
    tr, rest = train_test_split(rows, train_size=N_TRAIN, stratify=digits.target, random_state=SPLIT_SEED)
    va, te = train_test_split(rest, train_size=N_VALID, stratify=digits.target[rest], random_state=SPLIT_SEED)
    te = np.sort(te)
    x, y = digits.data, digits.target
    return x[tr], y[tr], x[va], y[va], x[te], y[te], te


def corrupt(x: np.ndarray, kind: str, intensity: int) -> np.ndarray:
    """Apply corruption ``kind`` at ``intensity`` (1..5) to images ``x`` of shape (n, 64)."""
    from scipy import ndimage

    level = INTENSITIES[kind][intensity - 1]
    rng = np.random.default_rng(CORRUPTION_SEED + 100 * list(INTENSITIES).index(kind) + intensity)
    imgs = x.reshape(-1, 8, 8).astype(float)
    if kind == "gaussian-noise":
        out = imgs + rng.normal(0.0, level, size=imgs.shape)
    elif kind == "gaussian-blur":
        out = np.stack([ndimage.gaussian_filter(im, sigma=level, mode="constant") for im in imgs])
    elif kind == "rotation":
        signs = rng.choice([-1.0, 1.0], size=len(imgs))
        out = np.stack([ndimage.rotate(im, s * level, reshape=False, order=1, mode="constant")
                        for im, s in zip(imgs, signs, strict=True)])
    elif kind == "translation":
        angles = rng.uniform(0, 2 * np.pi, size=len(imgs))
        out = np.stack([ndimage.shift(im, (level * np.sin(a), level * np.cos(a)), order=1, mode="constant")
                        for im, a in zip(imgs, angles, strict=True)])
    elif kind == "contrast":
        mean = imgs.mean(axis=(1, 2), keepdims=True)
        out = mean + level * (imgs - mean)
    elif kind == "salt-and-pepper":
        hit = rng.random(imgs.shape) < level
        salt = rng.random(imgs.shape) < 0.5
        out = np.where(hit, np.where(salt, 16.0, 0.0), imgs)
    else:
        raise ValueError(f"unknown corruption {kind!r}")
    return np.clip(out, 0.0, 16.0).reshape(x.shape)


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def fit_mlps(x_train, y_train):
    """The ensemble members (member 0 is the vanilla network)."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier

    members = []
    for seed in ENSEMBLE_SEEDS:
        net = MLPClassifier(hidden_layer_sizes=HIDDEN, alpha=1e-4, max_iter=300, random_state=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            members.append(net.fit(x_train / 16.0, y_train))
    return members


def fit_temperature(log_probs: np.ndarray, y: np.ndarray) -> float:
    """The temperature minimising the NLL of ``softmax(log_probs / T)`` on (log_probs, y)."""
    from scipy.optimize import minimize_scalar

    def nll(log_t: float) -> float:
        p = _softmax(log_probs / np.exp(log_t))
        return -np.mean(np.log(p[np.arange(len(y)), y] + 1e-12))

    return float(np.exp(minimize_scalar(nll, bounds=(-3, 3), method="bounded").x))


class BayesLogReg:
    """Multinomial logistic regression with Normal(0, 1) weights, fitted by ADVI in PyMC."""

    def __init__(self, x_train, y_train):
        import pymc as pm

        self.mean = x_train.mean(axis=0)
        self.scale = x_train.std(axis=0) + 1.0
        z = (x_train - self.mean) / self.scale
        n_features, n_classes = z.shape[1], 10
        with pm.Model():
            w = pm.Normal("w", 0.0, 1.0, shape=(n_features, n_classes))
            b = pm.Normal("b", 0.0, 1.0, shape=n_classes)
            pm.Categorical("y", logit_p=pm.math.dot(z, w) + b, observed=y_train)
            approx = pm.fit(n=ADVI_ITERATIONS, method="advi", random_seed=0, progressbar=False,
                            obj_optimizer=pm.adam(learning_rate=0.01))
            draws = approx.sample(ADVI_DRAWS, random_seed=1)
        post = draws.posterior
        self.w = post["w"].values.reshape(-1, n_features, n_classes)
        self.b = post["b"].values.reshape(-1, n_classes)

    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        z = (x - self.mean) / self.scale
        return _softmax(np.einsum("nf,dfk->dnk", z, self.w) + self.b[:, None, :]).mean(axis=0)


def score_all(members, temperature, blr, x: np.ndarray) -> dict[str, np.ndarray]:
    """Probability vectors of every method on images ``x``."""
    member_probs = [m.predict_proba(x / 16.0) for m in members]
    vanilla = member_probs[0]
    return {
        "vanilla": vanilla,
        "temp-scaling": _softmax(np.log(np.clip(vanilla, 1e-300, None)) / temperature),
        "ensemble": np.mean(member_probs, axis=0),
        "bayes-logreg": blr.predict_proba(x),
    }


def _nll(p: np.ndarray, y: np.ndarray) -> float:
    soft = 1e-8 / p.shape[1] + (1 - 1e-8) * p
    return float(-np.mean(np.log(soft[np.arange(len(y)), y])))


def build_sets(x_test):
    """[(corruption, intensity, images)] for the clean set and the 30 shifted sets."""
    sets = [("none", 0, x_test)]
    for kind in INTENSITIES:
        sets += [(kind, i, corrupt(x_test, kind, i)) for i in range(1, 6)]
    return sets


def main() -> None:
    import sklearn

    base = _recipe("digits-logreg")
    x_tr, y_tr, x_va, y_va, x_te, y_te, test_rows = load_split()
    members = fit_mlps(x_tr, y_tr)
    print("networks fitted", flush=True)
    temperature = fit_temperature(np.log(np.clip(members[0].predict_proba(x_va / 16.0), 1e-300, None)), y_va)
    blr = BayesLogReg(x_tr, y_tr)
    print("Bayesian logistic regression fitted", flush=True)
    x_ood, ood_ids = _recipe("digits-shift").photo_patches(N_OOD)
    sources = [f"d{r:04d}" for r in test_rows]
    rows, summary = [], {}
    for corruption, intensity, x in [*build_sets(x_te), ("ood", 0, x_ood)]:
        labels = [None] * len(x) if corruption == "ood" else y_te.tolist()
        ids = ood_ids if corruption == "ood" else sources
        for method, p in score_all(members, temperature, blr, x).items():
            rounded = base.round_rows(p, DECIMALS)
            rows.append((corruption, intensity, method, ids, labels, rounded))
            key = f"{corruption}-{intensity}/{method}"
            entry = {"n_items": len(x), "mean_confidence": round(float(rounded.max(1).mean()), 4)}
            if corruption != "ood":
                entry.update(accuracy=round(float((rounded.argmax(1) == y_te).mean()), 4),
                             nll=round(_nll(p, y_te), 4), nll_rounded=round(_nll(rounded, y_te), 4))
            summary[key] = entry
    path = HERE / "predictions.csv.gz"
    _write(path, rows)
    print(f"temperature {temperature:.3f}")
    for key in ("none-0", "gaussian-noise-5", "rotation-5", "ood-0"):
        for method in METHODS:
            print(f"{key:20s} {method:13s} {summary[f'{key}/{method}']}")
    print(f"wrote {path} ({path.stat().st_size / 1e6:.2f} MB, scikit-learn {sklearn.__version__})")
    card_path = HERE / "card.json"
    card = json.loads(card_path.read_text())
    card["n_items"] = sum(len(r[3]) for r in rows)
    card["generator"].update(sklearn_version=sklearn.__version__, temperature=round(temperature, 4))
    card["sets"] = summary
    card_path.write_text(json.dumps(card, indent=2) + "\n")


def _write(path: Path, rows) -> None:
    """Write gzipped pbassess-csv (mtime 0 so the bytes depend on the content only)."""
    header = ["item_id", "label", *(f"p_{k}" for k in range(10)), "corruption", "intensity", "method"]
    fmt = f"{{:.{DECIMALS}f}}"
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as gz:
        lines = [",".join(header)]
        for corruption, intensity, method, ids, labels, probs in rows:
            for item, label, p in zip(ids, labels, probs, strict=True):
                cells = [f"{corruption}-{intensity}/{method}/{item}", "" if label is None else str(label)]
                cells += [fmt.format(v).rstrip("0").rstrip(".") if v else "0" for v in p]
                cells += [corruption, str(intensity), method]
                lines.append(",".join(cells))
        gz.write(("\n".join(lines) + "\n").encode("utf-8"))


if __name__ == "__main__":
    main()
