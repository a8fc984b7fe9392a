"""One module per command; cli/main.py assembles them."""

from __future__ import annotations

# Every command's and the group's click settings: -h works as --help, help wraps at 100 columns.
CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
