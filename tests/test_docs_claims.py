"""What the README and the guides tell a new user about installing, extras and benchmark
figures: every figure quoted from a benchmark is in benchmarks/LOG.md, and a script that needs
an extra says so where it is listed."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _read(path):
    return (ROOT / path).read_text(encoding="utf-8")


def test_readme_says_the_install_is_silent_and_which_example_needs_pillow():
    readme = _read("README.md")
    assert "pip is silent for about a minute" in readme
    row = next(line for line in readme.splitlines() if "`python examples/image_augmentation.py`" in line)
    assert 'pip install -e ".[images]"' in row and "Pillow" in row


def test_benchmark_figures_in_the_guides_come_from_the_log():
    log = _read("benchmarks/LOG.md")
    for guide, script in (("docs/rnn.md", "rnn_step.py"), ("docs/strings_and_preprocessing.md",
                                                           "text_vectorization.py")):
        text = _read(guide)
        assert "still to be recorded" not in text and "no timings are claimed" not in text
        paragraph = text[text.index(f"`benchmarks/{script}`" if script == "text_vectorization.py"
                                    else f"`python benchmarks/{script}`"):]
        paragraph = paragraph[:paragraph.index("LOG.md")]
        figures = re.findall(r"\d[\d,]*\.\d+|\d{3,}", paragraph.split(")", 1)[1])
        assert figures, paragraph
        for figure in figures:
            assert figure in log, f"{guide} quotes {figure}, which benchmarks/LOG.md does not hold"
