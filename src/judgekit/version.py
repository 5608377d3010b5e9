"""judgekit's version, alone in a module: any layer imports it without importing the front door.

``judgekit.__version__`` is the same value; the build reads it from here.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
