"""Regenerate ``predictions.csv``: a small logistic regression on scikit-learn's digits.

The built-in default data set of pbassess. It needs only scikit-learn (the ``models`` extra)
and no network: ``load_digits()`` ships with scikit-learn (1,797 8x8 grey images of the
digits 0-9, pixel values 0..16; Alpaydin & Kaynak's UCI optdigits test set).

Recipe (deterministic; run ``python models/digits-logreg/make_predictions.py``):

1. Split the 1,797 images in half, stratified by digit (``train_test_split(test_size=0.5,
   stratify=y, random_state=0)``): 898 for training, 899 held out.
2. Train on only the first 15 training images of each digit (150 images), with a weakly
   regularised ``LogisticRegression(C=10)`` on the raw pixels.
3. Write the held-out half's class probabilities as pbassess-csv: ``item_id`` (the row of
   ``load_digits()``), ``label`` and ``p_0`` .. ``p_9``, rounded to 6 decimals and
   re-normalised (the largest entry absorbs the rounding) so every row sums to 1.

Why so few training images and so little regularisation: trained on all 898 images the
model is 96 % accurate and nearly calibrated, which leaves little to assess. With 150
images it is about 92 % accurate, overconfident (mean confidence about 0.95), and its
predicted classes differ clearly in precision (about 0.83 for a predicted 1 or 9, about
0.99 for a predicted 2 or 7) - the situation Bayesian assessment is for.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SPLIT_SEED = 0
TRAIN_PER_CLASS = 15
C = 10.0
DECIMALS = 6


def load_split():
    """The digits and the stratified half split: (X_train, y_train, X_test, y_test, test_rows)."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    rows = np.arange(digits.target.shape[0])
    tr, te = train_test_split(rows, test_size=0.5, stratify=digits.target, random_state=SPLIT_SEED)
    te = np.sort(te)  # held-out items in the order of load_digits()
    return digits.data[tr], digits.target[tr], digits.data[te], digits.target[te], te


def train_classifier():
    """The fitted classifier and its held-out half: (model, X_test, y_test, test_rows)."""
    from sklearn.linear_model import LogisticRegression

    x_train, y_train, x_test, y_test, test_rows = load_split()
    keep = np.concatenate([np.flatnonzero(y_train == k)[:TRAIN_PER_CLASS] for k in range(10)])
    model = LogisticRegression(C=C, max_iter=20_000).fit(x_train[keep], y_train[keep])
    return model, x_test, y_test, test_rows


def round_rows(probs: np.ndarray, decimals: int = DECIMALS) -> np.ndarray:
    """Round each probability row and let its largest entry absorb the rounding error."""
    scale = 10**decimals
    ints = np.rint(np.asarray(probs) * scale).astype(np.int64)
    top = ints.argmax(axis=1)
    rows = np.arange(ints.shape[0])
    ints[rows, top] += scale - ints.sum(axis=1)
    if (ints < 0).any():  # cannot happen for K * 0.5e-6 << max entry, but check anyway
        raise RuntimeError("rounding produced a negative probability")
    return ints / scale


def write_csv(path: Path, item_ids, labels, probs: np.ndarray, extra: dict[str, list] | None = None,
              decimals: int = DECIMALS) -> None:
    """Write pbassess-csv with fixed-point probabilities (empty label = unlabeled)."""
    extra = extra or {}
    header = ["item_id", "label", *(f"p_{k}" for k in range(probs.shape[1])), *extra]
    fmt = f"{{:.{decimals}f}}"
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(",".join(header) + "\n")
        for i, (item, label) in enumerate(zip(item_ids, labels, strict=True)):
            cells = [str(item), "" if label is None else str(label)]
            cells += [fmt.format(v).rstrip("0").rstrip(".") if v else "0" for v in probs[i]]
            cells += [str(col[i]) for col in extra.values()]
            fh.write(",".join(cells) + "\n")


def main() -> None:
    import sklearn

    model, x_test, y_test, test_rows = train_classifier()
    probs = round_rows(model.predict_proba(x_test))
    path = HERE / "predictions.csv"
    write_csv(path, [f"digit-{r:04d}" for r in test_rows], y_test.tolist(), probs)
    accuracy = float((probs.argmax(axis=1) == y_test).mean())
    print(f"wrote {path}: {len(y_test)} items, accuracy {accuracy:.4f}, "
          f"mean confidence {probs.max(axis=1).mean():.4f} (scikit-learn {sklearn.__version__})")
    card_path = HERE / "card.json"
    card = json.loads(card_path.read_text())
    card["published"] = {"accuracy": round(accuracy, 4)}
    card["generator"]["sklearn_version"] = sklearn.__version__
    card_path.write_text(json.dumps(card, indent=2) + "\n")


if __name__ == "__main__":
    main()
