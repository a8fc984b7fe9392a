"""The app layer's unit tests reach no API server: support.fakeapi answers every Kube."""

from __future__ import annotations

from support.fakeapi import fake_api

__all__ = ["fake_api"]
