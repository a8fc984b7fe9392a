"""Renderers: pure functions from the model to text; they never read the clock or probe a tty."""

from __future__ import annotations
