"""The model zoo: lookup by name through the mirror and the cache, checksums, downloads.

Most tests build a temporary zoo (``PBASSESS_MODELS_DIR``) whose cards point at tiny files in
temporary mirror, cache and "remote" folders; downloads use ``file://`` URLs, so nothing
touches the network. The real zoo's cards and README cards are checked for consistency.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import pytest

from pbassess import DataError
from pbassess.data import registry

MODELS = Path(__file__).resolve().parents[2] / "models"

TINY_CSV = ",grp,y,score_A,score_B\n0,u,1,0.9,0.2\n1,v,0,0.3,0.6\n2,u,0,0.6,0.1\n"
TINY_SHA = hashlib.sha256(TINY_CSV.encode()).hexdigest()


@pytest.fixture
def zoo(tmp_path, monkeypatch):
    """A temporary zoo with a built-in default and a downloadable set, plus empty mirror/cache/remote folders."""
    root = tmp_path / "zoo"
    (root / "tiny-default").mkdir(parents=True)
    (root / "tiny-default" / "predictions.csv").write_text("item_id,label,p_a,p_b\nx,a,0.8,0.2\ny,b,0.4,0.6\n")
    _card(root, "tiny-default", {"format": "pbassess-csv", "file": "predictions.csv", "default": True, "classes": 2})
    remote = tmp_path / "remote"
    remote.mkdir()
    (remote / "tiny.csv").write_text(TINY_CSV)
    _card(root, "tiny-remote", {
        "format": "binary-scores-csv", "classes": 2, "n_items": 3,
        "source": {"url": (remote / "tiny.csv").as_uri(), "sha256": TINY_SHA, "mirror_path": "sub/tiny.csv"},
        "reader_options": {"model": "score_A", "threshold": 0.5},
    })
    mirror, cache = tmp_path / "mirror", tmp_path / "cache"
    monkeypatch.setenv("PBASSESS_MODELS_DIR", str(root))
    monkeypatch.setenv("PBASSESS_DATA_DIR", str(mirror))
    monkeypatch.setenv("PBASSESS_CACHE_DIR", str(cache))
    registry.registered_cards.cache_clear()
    yield {"root": root, "mirror": mirror, "cache": cache, "remote": remote}
    registry.registered_cards.cache_clear()


def _card(root: Path, name: str, fields: dict) -> None:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    card = {"name": name, "task": f"{name} task", "provenance": "test", "citation": "none", "license": "MIT", **fields}
    (folder / "card.json").write_text(json.dumps(card))


def _put(path: Path, text: str = TINY_CSV, *, gz: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if gz:
        path = path.with_name(path.name + ".gz")
        with gzip.open(path, "wt") as fh:
            fh.write(text)
    else:
        path.write_text(text)
    return path


# ------------------------------------------------------------------------------ listing and cards
def test_listing_puts_the_builtin_default_first(zoo):
    names = [c.name for c in registry.list_models()]
    assert names == ["tiny-default", "tiny-remote"]
    assert registry.default_name() == "tiny-default"
    assert registry.load_data().name == "tiny-default"


def test_unknown_names_are_one_line_errors_listing_the_registered(zoo):
    with pytest.raises(DataError, match=r"unknown data set 'nope' \(registered: tiny-default, tiny-remote\)"):
        registry.model_card("nope")
    with pytest.raises(DataError, match="neither a file nor a registered data set"):
        registry.load_data("nope")


def test_a_zoo_without_default_says_so(zoo):
    card_path = zoo["root"] / "tiny-default" / "card.json"
    card = json.loads(card_path.read_text())
    card["default"] = False
    card_path.write_text(json.dumps(card))
    registry.registered_cards.cache_clear()
    with pytest.raises(DataError, match="no built-in default"):
        registry.default_name()


def test_an_invalid_card_is_reported_with_its_path(zoo):
    (zoo["root"] / "broken").mkdir()
    (zoo["root"] / "broken" / "card.json").write_text("{not json")
    registry.registered_cards.cache_clear()
    with pytest.raises(DataError, match=r"broken.card\.json: invalid JSON"):
        registry.list_models()


def test_load_data_reads_plain_files_too(zoo, tmp_path):
    f = _put(tmp_path / "mine.csv")
    p = registry.load_data(f, model="score_B")
    assert p.n_items == 3 and p.predicted.tolist() == [0, 1, 0]


# ------------------------------------------------------------------------------ mirror, cache, download
def test_load_by_name_from_the_mirror(zoo):
    _put(zoo["mirror"] / "sub" / "tiny.csv")
    assert registry.resolve_path("tiny-remote", download=False) == zoo["mirror"] / "sub" / "tiny.csv"
    p = registry.load_data("tiny-remote")
    assert p.name == "tiny-remote" and p.n_items == 3
    assert p.predicted.tolist() == [1, 0, 1] and p.correct.tolist() == [True, True, False]  # score_A at 0.5
    assert not (zoo["cache"] / "sub" / "tiny.csv").exists(), "a mirrored file must not be copied to the cache"


def test_the_mirror_may_hold_the_gzipped_file(zoo):
    path = _put(zoo["mirror"] / "sub" / "tiny.csv", gz=True)
    assert registry.resolve_path("tiny-remote", download=False, verify=True) == path
    assert registry.load_data("tiny-remote").n_items == 3


def test_card_reader_options_are_overridden_by_arguments(zoo):
    _put(zoo["mirror"] / "sub" / "tiny.csv")
    assert registry.load_data("tiny-remote", threshold=0.95).predicted.tolist() == [0, 0, 0]
    assert registry.load_data("tiny-remote", model="score_B").predicted.tolist() == [0, 1, 0]


def test_load_by_name_from_the_cache(zoo, monkeypatch):
    monkeypatch.delenv("PBASSESS_DATA_DIR")
    cached = _put(zoo["cache"] / "sub" / "tiny.csv")
    assert registry.resolve_path("tiny-remote", download=False) == cached
    assert registry.load_data("tiny-remote").n_items == 3


def test_the_mirror_comes_before_the_cache(zoo):
    mirrored = _put(zoo["mirror"] / "sub" / "tiny.csv")
    _put(zoo["cache"] / "sub" / "tiny.csv")
    assert registry.resolve_path("tiny-remote", download=False) == mirrored


def test_a_corrupted_cached_copy_fails_its_checksum(zoo):
    _put(zoo["cache"] / "sub" / "tiny.csv", TINY_CSV.replace("0.9", "0.8"))
    with pytest.raises(DataError, match="checksum does not match the recipe of 'tiny-remote'"):
        registry.resolve_path("tiny-remote", verify=True)


def test_a_corrupted_mirror_copy_fails_its_checksum(zoo):
    _put(zoo["mirror"] / "sub" / "tiny.csv", TINY_CSV + "3,u,1,0.5,0.5\n", gz=True)
    with pytest.raises(DataError, match="checksum does not match"):
        registry.resolve_path("tiny-remote", verify=True)


def test_copy_to_cache_checks_the_checksum(zoo, tmp_path):
    bad = _put(tmp_path / "elsewhere" / "tiny.csv", TINY_CSV + "\n")
    with pytest.raises(DataError, match="checksum does not match"):
        registry.copy_to_cache("tiny-remote", bad)
    good = _put(tmp_path / "elsewhere" / "good.csv")
    assert registry.copy_to_cache("tiny-remote", good) == zoo["cache"] / "sub" / "tiny.csv"
    with pytest.raises(DataError, match="is built in; nothing to cache"):
        registry.copy_to_cache("tiny-default", good)


def test_nothing_local_and_no_download_allowed(zoo):
    with pytest.raises(DataError, match="not available locally"):
        registry.resolve_path("tiny-remote", download=False)


def test_download_from_a_file_url_lands_in_the_cache(zoo):
    p = registry.load_data("tiny-remote")
    cached = zoo["cache"] / "sub" / "tiny.csv"
    assert cached.read_text() == TINY_CSV and p.n_items == 3
    assert not [f for f in cached.parent.iterdir() if f.name.startswith(".download-")], "temporary file left behind"
    (zoo["remote"] / "tiny.csv").unlink()  # the second load must come from the cache
    assert registry.load_data("tiny-remote").n_items == 3
    assert registry.resolve_path("tiny-remote", download=False, verify=True) == cached


def test_a_download_with_the_wrong_checksum_is_discarded(zoo):
    (zoo["remote"] / "tiny.csv").write_text(TINY_CSV.replace("0.6,0.1", "0.7,0.1"))
    with pytest.raises(DataError, match=r"checksum mismatch for file:.*expected sha256 [0-9a-f]{12}\.\.\., got"):
        registry.load_data("tiny-remote")
    folder = zoo["cache"] / "sub"
    assert not folder.exists() or not any(folder.iterdir()), "a file failing its checksum must not be kept"


def test_a_failed_download_is_a_data_error(zoo):
    (zoo["remote"] / "tiny.csv").unlink()
    with pytest.raises(DataError, match="could not download file:"):
        registry.load_data("tiny-remote")


def test_a_missing_builtin_file_is_reported(zoo):
    (zoo["root"] / "tiny-default" / "predictions.csv").unlink()
    with pytest.raises(DataError, match="built-in predictions of 'tiny-default' are missing"):
        registry.load_data()


# ------------------------------------------------------------------------------ the real zoo
def test_the_builtin_default_works_without_mirror_or_network(monkeypatch, tmp_path):
    monkeypatch.delenv("PBASSESS_DATA_DIR", raising=False)
    monkeypatch.setenv("PBASSESS_CACHE_DIR", str(tmp_path / "empty-cache"))
    registry.registered_cards.cache_clear()
    p = registry.load_data()
    assert p.name == "digits-logreg" and p.n_items == 899
    assert registry.load_data("digits-shift").n_items == 5_894
    assert not (tmp_path / "empty-cache").exists()


def test_every_real_card_is_complete():
    registry.registered_cards.cache_clear()
    cards = registry.list_models()
    assert cards[0].name == "digits-logreg" and "digits-shift" in {c.name for c in cards if c.builtin}
    assert all(c.builtin for c in cards[:2])  # the default first, then the other built-in sets
    assert sum(c.default for c in cards) == 1
    for card in cards:
        for field in ("task", "provenance", "citation", "license", "format"):
            assert getattr(card, field), f"{card.name}: empty {field}"
        assert isinstance(card.extra.get("n_items"), int) and card.extra["n_items"] > 0, card.name
        if card.builtin:
            assert (card.folder / card.file).is_file() and (card.folder / "make_predictions.py").is_file()
        else:
            src = card.source
            assert src["url"].startswith("https://") and len(src["sha256"]) == 64 and src["mirror_path"]


def test_every_real_card_has_a_human_card_agreeing_with_it():
    for card_path in sorted(MODELS.glob("*/card.json")):
        card = json.loads(card_path.read_text())
        readme = (card_path.parent / "README.md").read_text()
        assert readme.startswith(f"# {card['name']}\n"), card_path
        for text in (card["task"], card["citation"], card["license"]):
            assert text in readme, f"{card['name']}: README.md does not show {text[:40]!r}"
        if "source" in card:
            assert card["source"]["url"] in readme and card["source"]["sha256"] in readme
        else:
            assert "Built in" in readme
        assert f"[`{card['name']}`]({card['name']}/README.md)" in (MODELS / "README.md").read_text()


def test_mirrored_real_files_match_their_checksums(shared_data_dir):
    registry.registered_cards.cache_clear()
    for card in registry.list_models():
        if not card.builtin:
            path = registry.resolve_path(card.name, download=False, verify=True)
            assert path.is_relative_to(shared_data_dir), path
