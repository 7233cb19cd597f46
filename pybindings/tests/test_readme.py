"""Runs every Python block of pybindings/README.md: the exploration examples stay true."""

import os
import pathlib
import re

import pytest

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"


def blocks():
    text = README.read_text()
    return re.findall(r"```python\n(.*?)```", text, re.S)


def test_readme_has_the_two_examples():
    assert len(blocks()) >= 2


@pytest.mark.parametrize("index", range(len(blocks())))
def test_readme_block(index, capsys):
    code = blocks()[index]
    faulty = os.environ.get("NDKCT_FAULTY_DIR")
    if "build/conformance/faulty/" in code:
        if not faulty or not os.path.isdir(faulty):
            pytest.skip("NDKCT_FAULTY_DIR (the faulty providers) is not set")
        code = code.replace("build/conformance/faulty/", faulty.rstrip("/") + "/")
    namespace = {"__name__": f"readme_block_{index}"}
    exec(compile(code, f"{README}:block{index}", "exec"), namespace)
    tests = [f for name, f in namespace.items() if name.startswith("test_") and callable(f)]
    assert tests, "a README block defines no test"
    for test in tests:
        test()
    out = capsys.readouterr().out
    print(out)
