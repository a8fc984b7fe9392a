"""Where a command reads from: the kubectl connection flags plus the object scope."""

from __future__ import annotations

from kubectl_machinepool.base.records import record

# LIST page size. kubectl's 500 makes every page after the first a read from etcd, which at a
# few thousand Machines took 0.1-0.4 s a page against about 1 s for the whole list served from
# the watch cache in one answer (tests/benchmarks/scale.py). Answers are walked as they arrive
# (liststream.py), so a big page costs no more memory than small ones; 5000 keeps one page of
# real Nodes, images and all, well under the 256 MiB an answer may have.
CHUNK_SIZE = 5000


@record
class AccessOptions:
    """Where to read from: the kubectl connection flags plus the object scope."""

    kubeconfig: str | None = None
    context: str | None = None
    namespace: str | None = None
    all_namespaces: bool = False
    selector: str | None = None
    # --request-timeout: the longest one request may take; None (0) sets no limit on a whole
    # request, though connecting, the TLS handshake and silence stay bounded (interruptible.py).
    request_timeout: float | None = None
    # Objects per LIST page (kubectl's --chunk-size); 0 reads each list in one answer.
    chunk_size: int = CHUNK_SIZE

    def scope(self, default: str | None) -> str | None:
        """The namespace to read, kubectl's way: -A means all, else -n, else the context's."""
        return None if self.all_namespaces else self.namespace or default
