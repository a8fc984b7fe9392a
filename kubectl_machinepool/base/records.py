"""Frozen records: frozen dataclasses that cost less to define.

A frozen dataclass compiles six methods from source when its module is imported, ~0.8 ms a
class here; a describe defines ~80 before its first line. `record` lets dataclasses collect the
fields (and make the slots) but compile nothing, compiles `__init__` when the class is first
instantiated (a describe makes instances of 58 of the 81 it imports), and gives every class
the same frozen `__setattr__`/`__delattr__`, equality, hash, repr and pickling, over its fields
as dataclasses would. The result is a dataclass (fields(), replace(), asdict() work) and type
checkers see one through dataclass_transform.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from operator import attrgetter
from typing import Any, NoReturn, TypeVar, cast, dataclass_transform, overload

_C = TypeVar("_C", bound=type)
_FACTORY: Any = object()  # an __init__ default: "call the field's default_factory"
_set = object.__setattr__


def _no_values(_obj: object) -> tuple[()]:
    return ()


def _getter(names: list[str]) -> Callable[[object], Any]:
    if not names:
        return _no_values
    many = attrgetter(*names)
    return many if len(names) > 1 else lambda obj: (many(obj),)


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is not self.__class__:
        return NotImplemented
    values = self.__class__.__record_compared__
    return values(self) == values(other)


def _hash(self: Any) -> int:
    return hash(self.__class__.__record_compared__(self))


def _repr(self: Any) -> str:
    shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__class__.__record_shown__)
    return f"{self.__class__.__qualname__}({shown})"


def _setattr(_self: Any, name: str, _value: object) -> NoReturn:
    raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


def _delattr(_self: Any, name: str) -> NoReturn:
    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")


def _getstate(self: Any) -> list[object]:
    return [getattr(self, f.name) for f in dataclasses.fields(self)]


def _setstate(self: Any, state: list[object]) -> None:
    for f, value in zip(dataclasses.fields(self), state, strict=True):
        _set(self, f.name, value)


def _compiled_init(cls: Any, fields: tuple[dataclasses.Field[Any], ...]) -> Callable[..., None]:
    """dataclasses' frozen __init__ for these fields: defaults, factories and keyword-only."""
    scope: dict[str, Any] = {"_set": _set, "_FACTORY": _FACTORY}
    params, keywords, body = ["self"], list[str](), list[str]()
    for f in fields:
        param = f.name
        if f.default is not dataclasses.MISSING:
            scope[f"_default_{f.name}"] = f.default
            param += f"=_default_{f.name}"
        elif f.default_factory is not dataclasses.MISSING:
            scope[f"_factory_{f.name}"] = f.default_factory
            param += "=_FACTORY"
            body.append(f" if {f.name} is _FACTORY: {f.name} = _factory_{f.name}()")
        (keywords if f.kw_only else params).append(param)
        body.append(f" _set(self, {f.name!r}, {f.name})")
    signature = ", ".join([*params, *(["*", *keywords] if keywords else [])])
    # The source is made of this package's own field names, never of anything read.
    exec(f"def __init__({signature}) -> None:\n" + "\n".join(body or [" pass"]), scope)
    init = cast(Callable[..., None], scope["__init__"])
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init


def _init(cls: Any, fields: tuple[dataclasses.Field[Any], ...]) -> Callable[..., None]:
    """An __init__ that puts the compiled one in its place on the first call, then calls it."""
    for f in fields:
        if not f.init:
            raise TypeError(f"record field {f.name} must be set by __init__")

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        # Two threads may both compile on a first call at once: either result is the same.
        compiled = cls.__dict__["__init__"]
        if compiled is __init__:
            compiled = cls.__init__ = _compiled_init(cls, fields)
        compiled(self, *args, **kwargs)

    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    return __init__


def _finish(cls: _C, slots: bool) -> _C:
    written = set(cls.__dict__)  # methods the class body wrote itself stay
    if "__post_init__" in written:  # record's __init__ does not call it: say so, not ignore it
        raise TypeError(f"{cls.__qualname__}: a record has no __post_init__")
    undocumented = not cls.__doc__
    if undocumented:  # else dataclasses writes one from inspect.signature: 0.2 ms a class
        cls.__doc__ = cls.__qualname__
    made: Any = dataclasses.dataclass(
        cls, init=False, repr=False, eq=False, frozen=False, slots=slots
    )
    if undocumented:
        made.__doc__ = None
    fields = dataclasses.fields(made)
    made.__init__ = _init(made, fields)
    made.__setattr__, made.__delattr__ = _setattr, _delattr
    if slots:
        made.__getstate__, made.__setstate__ = _getstate, _setstate
    made.__record_compared__ = staticmethod(_getter([f.name for f in fields if f.compare]))
    made.__record_shown__ = tuple(f.name for f in fields if f.repr)
    if "__eq__" not in written:
        made.__eq__ = _eq
        if "__hash__" not in written:
            made.__hash__ = _hash
    if "__repr__" not in written:
        made.__repr__ = _repr
    return cast(_C, made)


@overload
def record(cls: _C, /) -> _C: ...


@overload
def record(*, slots: bool = True) -> Callable[[_C], _C]: ...


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field,))
def record(cls: _C | None = None, /, *, slots: bool = True) -> _C | Callable[[_C], _C]:
    """`@dataclass(frozen=True, slots=True)` for less; `@record(slots=False)` where a class
    needs a __dict__ (cached properties) or is generic."""
    if cls is None:
        return lambda c: _finish(c, slots)
    return _finish(cls, slots)
