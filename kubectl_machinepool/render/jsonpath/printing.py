"""kubectl's output rules: Go's number and JSON formatting, and how results are joined."""

from __future__ import annotations

import json.encoder
import math
import re
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from kubectl_machinepool.base.timeutil import format_time, parse_time
from kubectl_machinepool.render.jsonpath.limits import Budget, Failed

# What Go's encoding/json escapes beyond Python's encoder: HTML's specials, the JavaScript
# line separators, and (for lone surrogates, which Go strings cannot hold) the replacement.
_GO_JSON_EXTRA = re.compile("[<>&\u2028\u2029\ud800-\udfff]")


def key_text(key: Any) -> str:
    return key if isinstance(key, str) else text(key)


# -- printing ---------------------------------------------------------------------------------


def _digits(number: float) -> tuple[str, int]:
    """The shortest digits that give back abs(number), and where the point goes: the number
    is 0.DIGITS times 10**point."""
    if number == 0:
        return "", 0
    _, digits, exponent = Decimal(repr(abs(number))).as_tuple()
    shown = "".join(map(str, digits))
    point = len(shown) + int(exponent)
    return shown.rstrip("0"), point


def _positional(digits: str, point: int) -> str:
    if point <= 0:
        return "0." + "0" * -point + digits if digits else "0"
    if point >= len(digits):
        return digits + "0" * (point - len(digits))
    return digits[:point] + "." + digits[point:]


def _exponential(digits: str, point: int) -> str:
    exponent = point - 1
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{mantissa}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"


def go_float(number: float, json: bool = False) -> str:
    """A float64 as Go prints it: fmt's %v, or with json encoding/json's form."""
    if not math.isfinite(number):
        return "NaN" if math.isnan(number) else ("+Inf" if number > 0 else "-Inf")
    digits, point = _digits(number)
    sign = "-" if math.copysign(1, number) < 0 else ""
    if json:
        if number != 0 and not 1e-6 <= abs(number) < 1e21:
            return sign + _exponential(digits, point).replace("e-0", "e-")
        return sign + _positional(digits, point)
    if digits and not -4 <= point - 1 < 6:
        return sign + _exponential(digits, point)
    return sign + _positional(digits, point)


def as_read(value: Any) -> Any:
    """A dump's unquoted timestamp, which YAML reads as a datetime, as the RFC 3339 text that
    the API holds (and kubectl prints, compares and sorts)."""
    if isinstance(value, datetime):
        return format_time(parse_time(value))
    return value.isoformat() if isinstance(value, date) else value


def text(value: Any) -> str:
    """A scalar as kubectl's jsonpath prints it."""
    value = as_read(value)
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return go_float(value)
    return "null" if value is None else str(value)


def _json_string(value: str) -> str:
    encoded: str = json.encoder.encode_basestring(value)
    if _GO_JSON_EXTRA.search(encoded) is None:
        return encoded
    return _GO_JSON_EXTRA.sub(
        lambda m: "\\ufffd" if "\ud800" <= m.group() <= "\udfff" else f"\\u{ord(m.group()):04x}",
        encoded,
    )


def go_json(value: Any) -> str:
    """Compact JSON as Go's json.Marshal writes it: keys sorted, <>& escaped."""
    if isinstance(value, dict):
        entries = sorted(value.items(), key=lambda entry: key_text(entry[0]))
        inner = ",".join(f"{_json_string(key_text(k))}:{go_json(v)}" for k, v in entries)
        return "{" + inner + "}"
    if isinstance(value, list):
        return "[" + ",".join(go_json(item) for item in value) + "]"
    if isinstance(value, bool) or value is None:
        return text(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise Failed(f"json: unsupported value: {go_float(value)}")
        return go_float(value, json=True)
    if isinstance(value, int):
        return str(value)
    return _json_string(text(value))


def sprint(value: Any) -> str:
    """A value as Go's fmt.Sprint shows it (custom columns): map[k:v], [a b], <nil>."""
    if isinstance(value, dict):
        entries = sorted(value.items(), key=lambda entry: key_text(entry[0]))
        return "map[" + " ".join(f"{key_text(k)}:{sprint(v)}" for k, v in entries) + "]"
    if isinstance(value, list):
        return "[" + " ".join(sprint(item) for item in value) + "]"
    return "<nil>" if value is None else text(value)


def printed(groups: list[list[Any]], budget: Budget) -> str:
    parts: list[str] = []
    for group in groups:
        for index, value in enumerate(group):
            shown = go_json(value) if isinstance(value, dict | list) else text(value)
            if index < len(group) - 1:
                shown += " "
            budget.spend(chars=len(shown))
            parts.append(shown)
    return "".join(parts)
