"""The floor of a describe: the same LISTs, in parallel, by the least a Python program can do.

    python tests/benchmarks/floor.py SPEC.json MODE

SPEC.json: [{"server": "https://127.0.0.1:PORT", "ca": FILE, "cert": FILE, "key": FILE,
"paths": ["/apis/.../machines", ...]}, ...]; MODE: `limit=500` (pages of 500, as client-go and
kubectl read), `all` (one unpaginated read from etcd) or `rv=0` (resourceVersion=0: the watch
cache, no etcd read). One thread and one connection per LIST; every page is parsed with
json.loads; prints `items PATH COUNT` per LIST. Only the standard library: no client package's
import cost or parsing layers, so what is left is the servers' time and JSON parsing.
"""

from __future__ import annotations

import http.client
import json
import ssl
import sys
import threading
import urllib.parse

MODES = ("limit=500", "all", "rv=0")


def list_all(server: dict[str, str], path: str, mode: str, counts: dict[str, int]) -> None:
    context = ssl.create_default_context(cafile=server["ca"])
    context.load_cert_chain(server["cert"], server["key"])
    host = urllib.parse.urlsplit(server["server"])
    conn = http.client.HTTPSConnection(host.hostname or "", host.port, context=context)
    query = {"limit=500": {"limit": "500"}, "all": {}, "rv=0": {"resourceVersion": "0"}}[mode]
    items = 0
    while True:
        conn.request(
            "GET", f"{path}?{urllib.parse.urlencode(query)}", headers={"Accept": "application/json"}
        )
        resp = conn.getresponse()
        body = resp.read()
        if resp.status != 200:
            raise SystemExit(f"{path}: HTTP {resp.status} {body[:300]!r}")
        page = json.loads(body)
        items += len(page["items"])
        query = {**query, "continue": page["metadata"].get("continue") or ""}
        if not query["continue"]:
            break
    conn.close()
    counts[path] = items


def main() -> None:
    with open(sys.argv[1]) as spec_file:
        spec = json.load(spec_file)
    mode = sys.argv[2]
    if mode not in MODES:
        raise SystemExit(f"mode must be one of {', '.join(MODES)}")
    counts: dict[str, int] = {}
    threads = [
        threading.Thread(target=list_all, args=(server, path, mode, counts))
        for server in spec
        for path in server["paths"]
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if len(counts) != len(threads):
        raise SystemExit("a LIST failed")
    for path, count in sorted(counts.items()):
        print(f"items {path} {count}")


if __name__ == "__main__":
    main()
