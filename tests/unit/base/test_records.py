"""A record behaves as the frozen dataclass it replaces: compared, hashed, shown, replaced,
pickled and frozen alike, with a class body's own methods kept."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
from dataclasses import field
from functools import cached_property
from typing import Any, Generic, TypeVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubectl_machinepool.base.records import record

T = TypeVar("T")


@record
class Instance:
    name: str
    ready: bool = False
    zones: tuple[str, ...] = ()
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)


@dataclasses.dataclass(frozen=True, slots=True)
class Dataclass:
    name: str
    ready: bool = False
    zones: tuple[str, ...] = ()
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)


@record
class Empty:
    pass


@record
class One:
    value: int


@record(slots=False)
class Boxed(Generic[T]):
    value: T

    @cached_property
    def twice(self) -> tuple[T, T]:
        return (self.value, self.value)


@record
class Folded:
    text: str

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Folded) and self.text.lower() == other.text.lower()

    def __hash__(self) -> int:
        return hash(self.text.lower())

    def __repr__(self) -> str:
        return f"<{self.text}>"


@record
class Child(Instance):
    extra: int = 0


@record
class Defaults:
    name: str
    tags: list[str] = field(default_factory=list)
    count: int = 1
    owner: str = field(kw_only=True, default="")
    required: int = field(kw_only=True)


values = st.tuples(st.text(max_size=5), st.booleans(), st.lists(st.text(max_size=3)).map(tuple))


@given(values, values)
def test_equality_hash_and_repr_are_the_dataclasses(
    a: tuple[str, bool, tuple[str, ...]], b: tuple[str, bool, tuple[str, ...]]
) -> None:
    ours = Instance(a[0], a[1], a[2], raw={"x": 1}), Instance(*b)
    theirs = Dataclass(a[0], a[1], a[2], raw={"x": 1}), Dataclass(*b)
    assert (ours[0] == ours[1]) == (theirs[0] == theirs[1])
    assert (ours[0] != ours[1]) == (theirs[0] != theirs[1])
    if ours[0] == ours[1]:
        assert hash(ours[0]) == hash(ours[1])
    assert repr(ours[0]).replace("Instance", "Dataclass") == repr(theirs[0])


def test_fields_not_compared_are_not_compared_nor_shown() -> None:
    assert Instance("a", raw={"x": 1}) == Instance("a", raw={"y": 2})
    assert "raw" not in repr(Instance("a"))


def test_another_class_with_the_same_values_is_not_equal() -> None:
    others: list[object] = [Child("a"), ("a", False, ())]
    assert all(Instance("a") != other for other in others)
    one: object = One(1)
    assert one != Boxed(1)


def test_classes_without_fields_or_with_one_compare_and_hash() -> None:
    assert Empty() == Empty()
    assert hash(Empty()) == hash(Empty())
    assert repr(Empty()) == "Empty()"
    assert One(1) == One(1) != One(2)
    assert {One(1): "a"}[One(1)] == "a"


def test_init_takes_defaults_factories_and_keyword_only_fields() -> None:
    made = Defaults("a", required=2)
    assert (made.name, made.tags, made.count, made.owner, made.required) == ("a", [], 1, "", 2)
    assert Defaults("a", required=2).tags is not made.tags
    assert Defaults("a", ["x"], 3, owner="o", required=4).tags == ["x"]
    with pytest.raises(TypeError):
        Defaults("a", ["x"], 3, "o", 4)  # type: ignore[misc]
    with pytest.raises(TypeError):
        Defaults("a")  # type: ignore[call-arg]


def test_frozen_replaced_and_pickled() -> None:
    instance = Instance("a", zones=("1",))
    with pytest.raises(dataclasses.FrozenInstanceError):
        instance.name = "b"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del instance.name  # type: ignore[misc]
    assert copy.copy(instance) == instance
    assert copy.deepcopy(Boxed([1])) == Boxed([1])
    assert dataclasses.replace(instance, ready=True) == Instance("a", True, ("1",))
    assert pickle.loads(pickle.dumps(instance)) == instance
    assert dataclasses.is_dataclass(instance)
    assert not hasattr(instance, "__dict__")


def test_a_class_without_slots_keeps_its_cached_properties() -> None:
    boxed = Boxed(3)
    assert boxed.twice == (3, 3)
    assert boxed == Boxed(3)
    assert repr(boxed) == "Boxed(value=3)"


def test_methods_the_class_body_wrote_are_kept() -> None:
    assert Folded("A") == Folded("a")
    assert len({Folded("A"), Folded("a")}) == 1
    assert repr(Folded("A")) == "<A>"


def test_a_subclass_compares_its_own_fields() -> None:
    assert Child("a", extra=1) != Child("a", extra=2)
    assert repr(Child("a", extra=1)) == "Child(name='a', ready=False, zones=(), extra=1)"


def test_a_post_init_that_would_not_run_is_refused() -> None:
    with pytest.raises(TypeError, match="__post_init__"):

        @record
        class Checked:
            value: int

            def __post_init__(self) -> None:
                raise AssertionError("never called")


def test_init_is_compiled_on_the_first_call_even_a_wrong_one() -> None:
    @record
    class Late:
        name: str
        count: int = 0

    @record
    class Later(Late):
        extra: bool = False

    with pytest.raises(TypeError):
        Late()  # type: ignore[call-arg]
    assert Late("a", 2) == Late(name="a", count=2)
    assert Later("b", extra=True) == Later("b", 0, True)
    assert Late.__init__.__qualname__.endswith("Late.__init__")
    assert list(inspect.signature(Late).parameters) == ["name", "count"]


def test_a_docstring_is_kept_and_none_is_made_up() -> None:
    @record
    class Undocumented:
        name: str

    @record(slots=False)
    class Documented:
        """Said here."""

        name: str

    assert (Undocumented.__doc__, Documented.__doc__) == (None, "Said here.")
