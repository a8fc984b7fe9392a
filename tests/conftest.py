from __future__ import annotations

import difflib
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

GOLDEN = Path(__file__).parent / "golden"

# A shell without job control starts `cmd &` with SIGINT ignored, and an ignored signal stays
# ignored across exec: the plugins the signal tests start would never see their Ctrl-C. A
# terminal's Ctrl-C always arrives with the default disposition, so that is what tests get.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True, scope="session")
def no_user_config(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """No test reads the config file of the user running the suite
    (~/.config/kubectl-machinepool/config.yaml): its ignored rules and thresholds would change
    what every command prints. A test that wants a config file names its own. (A child process
    the tests start gets a scratch HOME, and with it no config file either.)"""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("xdg-config")))
        patch.delenv("KUBECTL_MACHINEPOOL_CONFIG", raising=False)
        yield


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden", action="store_true", help="rewrite golden files from the current output"
    )


@pytest.fixture
def golden(request: pytest.FixtureRequest) -> Callable[[str, str], None]:
    """Compare text with tests/golden/<name>; --update-golden rewrites the file instead."""

    def check(name: str, actual: str) -> None:
        path = GOLDEN / name
        if request.config.getoption("--update-golden"):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(actual)
            return
        if not path.exists():
            pytest.fail(f"no golden file {path}; run pytest --update-golden and review the diff")
        expected = path.read_text()
        if actual != expected:
            diff = "".join(
                difflib.unified_diff(
                    expected.splitlines(True), actual.splitlines(True), str(path), "actual"
                )
            )
            pytest.fail(f"output differs from {path}:\n{diff}")

    return check


@pytest.fixture
def no_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No kubeconfig, no in-cluster account, a scratch HOME and cache: a command run in the
    test process reaches no cluster but the one its flags name."""
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
