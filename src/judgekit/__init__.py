"""judgekit: layered grading for tool-using agents, with LLM judges that must earn trust.

The distribution is published as ``judgekit-agents``; the import name and command are ``judgekit``.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
