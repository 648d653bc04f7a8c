"""text_dataset_from_directory and TextLineDataset against Keras 3.15 on the folder of
tests/fixtures/text_dataset/make_text_dataset_fixture.py: class names, labels, which files go to
training and validation for a seed, max_length; and its errors."""
import ast
import os

import pytest

import minikeras as mk

_FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "text_dataset", "text_dataset_keras.txt")
with open(_FIXTURE) as _f:
    _LINES = [ast.literal_eval(line) for line in _f if line.strip()]
FILES = _LINES[0][1]
CASES = _LINES[1:]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("texts")
    for name, text in FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return str(root)


def _contents(ds, shuffled):
    rows = [(x.decode(), y.tolist()) for x, y in ds.unbatch().as_numpy_iterator()]
    return sorted(rows) if shuffled else rows


@pytest.mark.parametrize("kwargs,class_names,parts", CASES, ids=[str(i) for i in range(len(CASES))])
def test_matches_keras(folder, kwargs, class_names, parts):
    out = mk.utils.text_dataset_from_directory(folder, batch_size=4, verbose=False, **kwargs)
    got = out if isinstance(out, list) else [out]
    assert [p.class_names for p in got] == [class_names] * len(got)
    assert [_contents(p, kwargs.get("shuffle", True)) for p in got] == parts


def test_batches_are_string_tensors_and_labels(folder):
    ds = mk.utils.text_dataset_from_directory(folder, batch_size=4, shuffle=False, verbose=False)
    texts, labels = next(iter(ds))
    assert texts.dtype == mk.string and texts.shape == (4,)
    assert labels.dtype == mk.int32 and labels.numpy().tolist() == [0, 0, 0, 0]
    assert len(ds) == 5  # 18 files in batches of 4


def test_errors(tmp_path, folder):
    (tmp_path / "a.txt").write_text("no class folders")
    with pytest.raises(ValueError, match="No class folders found in directory"):
        mk.utils.text_dataset_from_directory(str(tmp_path), verbose=False)
    with pytest.raises(ValueError, match="must provide a `seed`"):
        mk.utils.text_dataset_from_directory(folder, validation_split=0.2, subset="training", verbose=False)
    with pytest.raises(ValueError, match="exactly 2 class_names"):
        mk.utils.text_dataset_from_directory(folder, label_mode="binary", verbose=False)
    with pytest.raises(ValueError, match="does not exist"):
        mk.utils.text_dataset_from_directory(str(tmp_path / "missing"), verbose=False)
