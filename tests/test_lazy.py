"""judgekit.lazy: a module named at the top of another is imported at its first attribute read.

bootstrap_ci's default statistic (once ``np.mean``, which imported numpy with judgekit.stats) is a function
calling ``np.mean``: the same interval.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from judgekit import lazy

_PROBE = """
import json, sys
import judgekit.calibration.agreement, judgekit.calibration.selective, judgekit.stats
before = "numpy" in sys.modules
default = judgekit.stats.bootstrap_ci([1.0, 2.0, 4.0, 8.0], n_resamples=200, seed=3)
import numpy as np
explicit = judgekit.stats.bootstrap_ci([1.0, 2.0, 4.0, 8.0], np.mean, n_resamples=200, seed=3)
print(json.dumps({"before": before, "after": "numpy" in sys.modules, "same": default == explicit}))
"""


def test_numpy_waits_for_its_first_use_and_gives_the_same_values() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True, timeout=120
    )
    found = json.loads(done.stdout)
    assert found == {"before": False, "after": True, "same": True}


def test_a_stand_in_reads_the_module_s_attributes_and_keeps_them() -> None:
    json_module = lazy.module("json")
    assert json_module.dumps([1]) == "[1]"
    assert "dumps" in vars(json_module)  # kept: the next read is a plain attribute
    assert json_module.dumps is json.dumps


def test_a_missing_module_fails_at_its_first_use_not_when_named() -> None:
    missing = lazy.module("judgekit_no_such_module")
    with pytest.raises(ModuleNotFoundError, match="judgekit_no_such_module"):
        missing.anything  # noqa: B018 - the read is the test
