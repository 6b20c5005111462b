"""Contract case of the paired model comparison: three real classifiers of the German credit set on the same items.

The fixture ``shared_data_dir`` (tests/conftest.py) makes sure the shared data are there; the
three score columns are read from it by name (334 labeled items, 8 joint outcomes, 3 pairs).
"""

import pbassess as pb

NUTS = {"draws": 500, "tune": 600}
MODELS = ("LR", "RandomForest", "GaussianNB")


def _german(models=MODELS):
    return {m: pb.load_data("german-sex", model=f"score_{m}") for m in models}


CASES = {
    "compare-models": (lambda p, inf, s: pb.compare_models(_german(), inference=inf, seed=s, sample_kwargs=NUTS),
                       "shared_data_dir"),
}
#: the paired differences are what a model comparison reports
MAIN = {"compare-models": "difference"}
