from __future__ import annotations

from hypothesis import settings
from profiles import profile_name

settings.load_profile(profile_name())
