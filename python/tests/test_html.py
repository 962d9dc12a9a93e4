"""Notebook display: every report object shows itself as HTML (``_repr_html_``) with its chart
inline as SVG, rendered by the same Rust code as the CLI's ``--html``, with the numbers the CLI
prints; tables still become pandas DataFrames.

Needs the package installed with its extension and the CLI binary; see conftest.py.
"""

import re

import pytest

from conftest import missing


def shown_numbers(html):
    """Every number of the answer on the page: {JSON pointer: exact JSON text}."""
    return dict(re.findall(r'data-json="([^"]*)" data-exact="([^"]*)"', html))


def at(obj, pointer):
    for key in pointer.split("/")[1:]:
        key = key.replace("~1", "/").replace("~0", "~")
        obj = obj[int(key)] if isinstance(obj, list) else obj[key]
    return obj


def check_page(html, answer):
    assert "<svg" in html and 'class="axis' in html, "a chart with axes"
    assert "http" not in html.lower() and "<script" not in html, "nothing fetched"
    numbers = shown_numbers(html)
    assert numbers, "numbers on the page"
    for pointer, exact in numbers.items():
        assert float(exact) == at(answer, pointer), pointer


def test_every_report_object_shows_itself_with_its_chart(wavecast):
    reports = [
        wavecast.predict("gpt2", gpu="h100", batch=2, seq=256),
        wavecast.serve("qwen2.5-7b", gpu="h100", batch=4, input_len=512, output_len=64),
        wavecast.train("gpt2", gpu="h100", batch=8, dp=2, tp=2),
        wavecast.plan_train("gpt2", gpu="h100", gpus=4, batch=16, top=3),
        wavecast.serve_sim("llama-3-8b", gpu="h100", concurrency=4, requests=32),
        wavecast.plan_serve("qwen2.5-7b", gpu="h100", gpus=2, concurrency=[4, 16], slo_tpot_ms=40),
    ]
    for r in reports:
        html = r._repr_html_()
        assert html.startswith('<div class="wavecast-report"'), type(r).__name__
        check_page(html, r.to_dict())
        assert "<h3>Inputs</h3>" in html, "the request is shown"


def test_the_notebook_numbers_are_the_cli_numbers(wavecast, cli):
    p = wavecast.predict("gpt2-large", gpu="a100", batch=4, mode="train")
    want = cli.json("predict", "--model", "gpt2-large", "--gpu", "a100", "--batch", 4, "--mode", "train")
    html = p._repr_html_()
    check_page(html, want)
    assert shown_numbers(html)["/total_ms"] == repr(want["total_ms"])


def test_compare_shows_gpus_side_by_side_and_stays_a_table(wavecast, tmp_path):
    rows = wavecast.compare("qwen2.5-7b", gpus=["h100", "l40s"], tp=[1, 2], batch=4, input_len=512, output_len=64)
    html = rows._repr_html_()
    check_page(html, rows.to_dict())
    assert "Tokens per dollar" in html and "l40s" in html
    page = rows.to_html(tmp_path / "compare.html")
    assert page.startswith("<!DOCTYPE html>") and (tmp_path / "compare.html").read_text() == page
    try:
        import pandas
    except ImportError:
        missing("pandas is not installed")
    frame = pandas.DataFrame(rows)
    assert list(frame["gpu"]) == [r.gpu for r in rows]


def test_a_plain_nested_object_has_no_page(wavecast):
    p = wavecast.predict("gpt2", gpu="h100")
    assert p.phases._repr_html_() is None
    with pytest.raises(TypeError):
        p.phases.to_html()
