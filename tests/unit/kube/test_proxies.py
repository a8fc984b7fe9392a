"""The proxies read from the environment are the ones urllib reads there."""

from __future__ import annotations

import os
import urllib.request

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubectl_machinepool.kube.proxies import environment_proxies

NAMES = ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "Https_Proxy", "no_proxy",
         "NO_PROXY", "all_proxy", "ALL_PROXY", "REQUEST_METHOD")  # fmt: skip
VALUES = st.sampled_from(["", "http://a:3128", "http://b:8080", "10.0.0.0/8"])


@given(st.dictionaries(st.sampled_from(NAMES), VALUES))
def test_as_urllib_reads_the_environment(variables: dict[str, str]) -> None:
    with pytest.MonkeyPatch.context() as patch:
        for name in os.environ:
            if name.lower().endswith("_proxy") or name == "REQUEST_METHOD":
                patch.delenv(name)
        for name, value in variables.items():
            patch.setenv(name, value)
        assert environment_proxies() == urllib.request.getproxies_environment()
