"""Regenerate ``predictions.csv``: the digits-logreg classifier under increasing input corruption.

A multi-environment prediction set for assessing how accuracy and calibration degrade under
distribution shift. It reuses the exact classifier of ``models/digits-logreg`` (imported from
its ``make_predictions.py``) and scores its 899 held-out images in seven environments:

* ``clean``: the images as they are (identical to digits-logreg);
* ``gaussian-noise-1`` .. ``gaussian-noise-5``: additive Gaussian pixel noise with standard
  deviation 2, 4, 6, 8 and 10 (on the 0..16 pixel scale), clipped back to 0..16; one fixed
  noise draw per environment (``numpy.random.default_rng(20240601 + severity)``);
* ``ood``: 500 out-of-distribution inputs that are not digits at all: 32x32 patches cut at
  seeded random positions from scikit-learn's two bundled photographs
  (``load_sample_images()``: china.jpg and flower.jpg), converted to grey, averaged down to 8x8
  (the digits were made the same way, from 32x32 bitmaps) and stretched to the digits'
  0..16 range. They have no true digit, so their ``label`` is empty.

Columns: ``item_id`` (``<environment>/<source item>``), ``label``, ``p_0`` .. ``p_9`` (rounded
to 5 decimals, rows re-normalised to sum to 1) and the group column ``environment``.
Run ``python models/digits-shift/make_predictions.py`` (needs scikit-learn and Pillow, no network).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
NOISE_SD = {1: 2.0, 2: 4.0, 3: 6.0, 4: 8.0, 5: 10.0}
NOISE_SEED = 20240601
N_OOD = 500
OOD_SEED = 7
DECIMALS = 5


def _base_recipe():
    """The digits-logreg generator module (same classifier, same split)."""
    path = HERE.parent / "digits-logreg" / "make_predictions.py"
    spec = importlib.util.spec_from_file_location("digits_logreg_recipe", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def gaussian_noise(x: np.ndarray, severity: int) -> np.ndarray:
    """Add N(0, sd^2) noise to every pixel (sd from ``NOISE_SD``) and clip to 0..16."""
    rng = np.random.default_rng(NOISE_SEED + severity)
    return np.clip(x + rng.normal(0.0, NOISE_SD[severity], size=x.shape), 0.0, 16.0)


def photo_patches(n: int, seed: int = OOD_SEED) -> tuple[np.ndarray, list[str]]:
    """``n`` 8x8 grey patches from the bundled photographs, in the digits' 0..16 range."""
    from sklearn.datasets import load_sample_images

    sample = load_sample_images()
    rng = np.random.default_rng(seed)
    patches, ids = [], []
    for i in range(n):
        which = i % len(sample.images)
        img = sample.images[which].astype(float)
        grey = img @ np.array([0.299, 0.587, 0.114])  # ITU-R 601 luma
        r = int(rng.integers(0, grey.shape[0] - 32 + 1))
        c = int(rng.integers(0, grey.shape[1] - 32 + 1))
        small = grey[r:r + 32, c:c + 32].reshape(8, 4, 8, 4).mean(axis=(1, 3))
        lo, hi = small.min(), small.max()
        small = (small - lo) / (hi - lo) * 16.0 if hi > lo else np.zeros_like(small)
        patches.append(small.ravel())
        ids.append(f"{Path(sample.filenames[which]).stem}-r{r:03d}c{c:03d}")
    return np.array(patches), ids


def main() -> None:
    import sklearn

    base = _base_recipe()
    model, x_test, y_test, test_rows = base.train_classifier()
    source_ids = [f"digit-{r:04d}" for r in test_rows]
    item_ids, labels, envs, probs = [], [], [], []
    environments = [("clean", x_test)] + [(f"gaussian-noise-{s}", gaussian_noise(x_test, s)) for s in NOISE_SD]
    summary = {}
    for env, x in environments:
        p = base.round_rows(model.predict_proba(x), DECIMALS)
        item_ids += [f"{env}/{i}" for i in source_ids]
        labels += y_test.tolist()
        envs += [env] * len(source_ids)
        probs.append(p)
        summary[env] = {"n_items": len(source_ids), "accuracy": round(float((p.argmax(1) == y_test).mean()), 4),
                        "mean_confidence": round(float(p.max(1).mean()), 4)}
    x_ood, ood_ids = photo_patches(N_OOD)
    p = base.round_rows(model.predict_proba(x_ood), DECIMALS)
    item_ids += [f"ood/{i}" for i in ood_ids]
    labels += [None] * N_OOD
    envs += ["ood"] * N_OOD
    probs.append(p)
    summary["ood"] = {"n_items": N_OOD, "accuracy": None, "mean_confidence": round(float(p.max(1).mean()), 4)}
    path = HERE / "predictions.csv"
    base.write_csv(path, item_ids, labels, np.vstack(probs), extra={"environment": envs}, decimals=DECIMALS)
    for env, s in summary.items():
        print(f"{env:18s} n={s['n_items']:4d} accuracy={s['accuracy']} mean confidence={s['mean_confidence']}")
    print(f"wrote {path} ({path.stat().st_size / 1e6:.2f} MB, scikit-learn {sklearn.__version__})")
    card_path = HERE / "card.json"
    card = json.loads(card_path.read_text())
    card["n_items"] = len(item_ids)
    card["environments"] = summary
    card["generator"]["sklearn_version"] = sklearn.__version__
    card_path.write_text(json.dumps(card, indent=2) + "\n")


if __name__ == "__main__":
    main()
