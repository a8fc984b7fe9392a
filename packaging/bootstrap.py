# kubectl-machinepool as one file: the __main__ of the zip that packaging/build makes.
#
# Kept to syntax every python3 parses, so that an old one reaches the version check below and
# says so in one line instead of a SyntaxError. The code runs from a copy unpacked once into the
# user's cache, where the Python that runs it keeps each module's byte code, as for an installed
# package: imports from inside the zip would compile every module on every run. Without a usable
# cache directory it runs from the zip, slower.
import sys

if sys.version_info < (3, 11):
    sys.stderr.write(
        "error: kubectl machinepool needs Python 3.11 or later, and python3 is %d.%d\n"
        "hint: install Python 3.11 or later as python3 on PATH\n" % tuple(sys.version_info[:2])
    )
    sys.exit(1)

import os

# The version and a digest of every file of the zip but this one, filled in by packaging/build:
# a new build unpacks beside the old ones, never over a copy a running process imports from.
BUILD = "@BUILD@"


def _cache_root():
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):  # the XDG spec: a relative path is to be ignored
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "kubectl-machinepool", "single-file")


def _usable(directory):
    """Ours alone: a directory another user could write to could hand us other code."""
    try:
        st = os.stat(directory)
    except OSError:
        return False
    return st.st_uid == os.getuid() and not st.st_mode & 0o022


def _unpacked(archive):
    root = _cache_root()
    home = os.path.join(root, BUILD)
    if os.path.exists(os.path.join(home, ".complete")):
        return home if _usable(home) else None
    try:
        return _unpack(archive, root, home)
    except OSError:
        return None


def _unpack(archive, root, home):
    """Into a directory of its own first, moved into place whole: a run that finds the copy
    finds all of it, and two first runs at once both end with one."""
    import shutil
    import tempfile
    import zipfile

    os.makedirs(root, mode=0o700, exist_ok=True)
    scratch = tempfile.mkdtemp(prefix=".unpacking-", dir=root)
    try:
        with zipfile.ZipFile(archive) as zipped:
            zipped.extractall(scratch, [n for n in zipped.namelist() if n != "__main__.py"])
        with open(os.path.join(scratch, ".complete"), "w") as marker:
            marker.write(BUILD + "\n")
        os.rename(scratch, home)
    except OSError:
        if not os.path.exists(os.path.join(home, ".complete")):
            raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return home if _usable(home) else None


def _run():
    archive = sys.path[0]
    home = _unpacked(archive)
    if home is not None:
        sys.path[0] = home
        # Byte code is kept beside the copy even under PYTHONDONTWRITEBYTECODE (common in
        # containers), as pip writes it when it installs: else every run compiles every module.
        sys.dont_write_bytecode = False
    from kubectl_machinepool.cli import main

    main()


_run()
