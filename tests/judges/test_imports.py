"""Importing the judge layer must not import litellm (about 4 s); only building a calling client does."""

from __future__ import annotations

import subprocess
import sys

CODE = """
import sys
import judgekit.graders.rubric, judgekit.judges.pairwise, judgekit.judges.cache, judgekit.judges.fingerprint
from judgekit.judges.rubric import load_builtin_rubric
from judgekit.judges.prompt import PromptRenderer
rubric = load_builtin_rubric("honest-reporting")
PromptRenderer(rubric).render(rubric.criteria[0], "t", "f")
print("litellm" in sys.modules)
"""


def test_judge_modules_do_not_import_litellm() -> None:
    out = subprocess.run([sys.executable, "-c", CODE], check=True, capture_output=True, text=True)
    assert out.stdout.strip() == "False"
