"""The package surface: public names resolve, importing has no heavy side effects,
and the module docstring examples run."""

from __future__ import annotations

import doctest
import subprocess
import sys
from pathlib import Path

import pytest

import qnmodel as qn
from qnmodel import units

from ._user_env import user_env


def test_every_public_name_resolves():
    for name in qn.__all__:
        assert getattr(qn, name) is not None, name


def test_the_rate_curve_fitter_is_public_and_named_where_users_look():
    """issue 26 item 7: fit_rate_multipliers was reachable only as
    qnmodel.calibration.rate_curve.fit_rate_multipliers."""
    import re

    from qnmodel.calibration.rate_curve import fit_rate_multipliers

    assert "fit_rate_multipliers" in qn.__all__ and qn.fit_rate_multipliers is fit_rate_multipliers
    assert "fit_rate_multipliers" in qn.calibration.__all__
    assert qn.calibration.fit_rate_multipliers is fit_rate_multipliers
    # The Station docstring names it, and every qnmodel name it cites resolves.
    doc = qn.Station.__doc__
    assert ":func:`qnmodel.fit_rate_multipliers`" in doc
    for ref in re.findall(r":(?:func|class|mod):`(qnmodel[\w.]*)`", doc):
        obj = qn
        for part in ref.split(".")[1:]:
            obj = getattr(obj, part)
    fit = qn.fit_rate_multipliers([1, 2, 4], [100.0, 180.0, 280.0])
    assert fit.rate_multipliers.tolist() == pytest.approx([1.0, 1.8, 2.3, 2.8], rel=1e-15)


def test_unknown_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        qn.nope  # noqa: B018


def test_import_loads_no_pandas_matplotlib_or_sympy():
    code = (
        "import sys, qnmodel\n"
        "heavy = [m for m in ('pandas', 'matplotlib', 'sympy', 'scipy') if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_lazy_names_are_the_real_objects():
    from qnmodel.io.modelfile import load
    from qnmodel.whatif import sweep

    assert qn.sweep is sweep
    assert qn.load_model is load


@pytest.mark.parametrize("module", [qn, units], ids=["qnmodel", "qnmodel.units"])
def test_module_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0


def test_readme_python_example_runs(capsys):
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", readme, flags=re.S)
    assert blocks, "README has no python example"
    for code in blocks:
        exec(compile(code, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "bottleneck disk" in out and "knee N* = " in out


def test_suite_refuses_to_run_against_the_source_tree(tmp_path):
    """`python -m pytest` from the repository root would import ./qnmodel (no compiled
    kernels, no qnbench): the suite must stop with a usage error that says so."""
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--collect-only", "-q",
         "tests/test_units.py"],
        cwd=root, capture_output=True, text=True, timeout=120,
        env=user_env(PYTHONPATH=str(root)),
    )  # fmt: skip
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert "imported from the source tree" in proc.stdout + proc.stderr
