"""Fixtures for judge tests: loopback OpenAI-compatible servers and clients pointed at them."""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
