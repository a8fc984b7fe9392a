"""kubectl's JSONPath dialect, custom columns and --sort-by, as pure functions.

Expected outputs are what kubectl v1.36 prints for the same template over the same data (the
pool cases are also compared with the real kubectl in tests/integration/test_list_output.py).
"""

from __future__ import annotations

import inspect
import sys
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

import pytest
from support.objects import NOW, list_scenario

from kubectl_machinepool.app.listing import listed_pools
from kubectl_machinepool.model.selector import Selection
from kubectl_machinepool.model.snapshot import Snapshot
from kubectl_machinepool.render import columns
from kubectl_machinepool.render.jsonpath import (
    TemplateError,
    go_float,
    go_json,
    limits,
    parse,
    relaxed,
    sprint,
)
from kubectl_machinepool.render.listing import template_list

# asg-workers, gke-default, pending-pool, vmss-workers: as the API gives them, plus summaries.
POOLS = template_list(
    listed_pools(Snapshot.of(list_scenario("v1beta2", "capi-prod")), NOW, Selection())
)
VALUES: dict[str, Any] = {
    "text": "xy",
    "null": None,
    "yes": True,
    "half": 1.5,
    "list": [1, "two", None],
    "map": {"b": 1, "a": "<&>"},
    "deep": {"a": {"b": "c"}, "d": []},
    "bools": [True],
    "lists": [[1, 2]],
    "mixed": [{"a": "x"}, {"b": 1}],
}


def run(template: str, data: Any = POOLS) -> str:
    return parse(template).render(data)


@pytest.mark.parametrize(
    ("template", "printed"),
    [
        ("{.items[*].metadata.name}", "asg-workers gke-default pending-pool vmss-workers"),
        ("{.items[0].spec.replicas} {.items[-1].metadata.name}", "3 vmss-workers"),
        (
            "{.items[1:3].metadata.name}|{.items[::2].metadata.name}|{.items[-2:].metadata.name}",
            "gke-default pending-pool|asg-workers pending-pool|pending-pool vmss-workers",
        ),
        ("{.items[0,2].metadata.name}", "asg-workers pending-pool"),
        (
            "{.items[*]['metadata.name', 'spec.replicas']}",
            "asg-workers gke-default pending-pool vmss-workers 3 4 1 2",
        ),
        ('{.items[?(@.status.phase=="Running")].metadata.name}', "gke-default vmss-workers"),
        ('{.items[?(@.status.phase != "Running")].metadata.name}', "asg-workers pending-pool"),
        ("{.items[?(@.spec.replicas>2)].metadata.name}", "asg-workers gke-default"),
        ("{.items[?(@.spec.replicas<=2)].spec.replicas}", "1 2"),
        ("{.items[?(@.spec.replicas>=4)].spec.replicas}", "4"),
        ("{.items[?(@.spec.replicas<2)].spec.replicas}", "1"),
        ("{.items[?(@.spec.failureDomains)].metadata.name}", "asg-workers vmss-workers"),
        (
            '{range .items[*]}{.metadata.name}{"\\t"}{.status.replicas}{"\\n"}{end}',
            "asg-workers\t3\ngke-default\t4\npending-pool\t0\nvmss-workers\t2\n",
        ),
        (
            "{range .items[*]}{.metadata.name}:{range .spec.failureDomains[*]} {@}{end};{end}",
            "asg-workers: eu-west-1a eu-west-1b;gke-default:;pending-pool:;vmss-workers: 1 2 3;",
        ),
        ("{.items[*]..clusterName}", " ".join(["prod"] * 8)),
        ("{.items[0].metadata.labels}", '{"cluster.x-k8s.io/cluster-name":"prod"}'),
        ("{.items[0].spec.failureDomains}", '["eu-west-1a","eu-west-1b"]'),
        ("{.items[*].spec.nothing}before {.items[0].metadata.nothing}after", "before after"),
        ("{.kind} {.apiVersion} {.metadata} {$.kind}", 'List v1 {"resourceVersion":""} List'),
        ("{.items[0].metadata.labels.cluster\\.x-k8s\\.io/cluster-name}", "prod"),
        # The summary is what makes READY Node-based; status.readyReplicas is the ASG's copy.
        ("{.items[*].summary.replicas.ready} {.items[*].status.readyReplicas}", "2 4 0 2 3 4 0 2"),
        (
            "{.items[?(@.summary.replicas.available<@.summary.replicas.desired)].metadata.name}",
            "asg-workers pending-pool",
        ),
        ('text, {"{"} and {"}"}', "text, { and }"),
    ],
)
def test_templates_over_the_pools(template: str, printed: str) -> None:
    assert run(template) == printed


@pytest.mark.parametrize(
    ("template", "printed"),
    [
        ("{.text.*}", "120 121"),  # a string's bytes, as numbers
        ("{.null} {.yes} {.half} {.list}", 'null true 1.5 [1,"two",null]'),
        ("{.map}", '{"a":"\\u003c\\u0026\\u003e","b":1}'),  # Go's json.Marshal: keys sorted
        ("{.}", ""),  # a field with an empty name
        ("{.deep..}", '{"a":{"b":"c"},"d":[]} {"b":"c"} c'),  # non-empty containers, strings
        ("{...b}|{.deep...b}", "c 1 1|c"),
        ("{.map.*}", "<&> 1"),
        ("{range .list[*]}[{@}]", "[1][two][null][" + go_json(VALUES) + "]"),
        ("{range .nothing[*]}x{end}y", "y"),
        ("{range .mixed[*]}{range @.*}<{@}>{end}{end}", "<x><1>"),
        ('{"\\t"}{"\\x41"}{"\\101"}{"\\u00e9"}{\'it\\\'s\'}', "\tAAéit's"),
        ("{.list[0:0]}|{.list[]}|{.list[-1:]}|{.list[*]}", "|1|null|1 two null"),
        ("{.mixed[?(@.a[0])].a}", "x"),  # the failing path keeps the item, as kubectl does
        ("{.list[?(@)]}", "1 two null"),
        ("{.list[0,0,2]}", "1 1 null"),
        ("{range}{.text}{end}", "xy"),
        ("{.yes.x}{.null.x}{.list.x}", ""),
    ],
)
def test_kubectls_rules_over_values(template: str, printed: str) -> None:
    assert run(template, VALUES) == printed


@pytest.mark.parametrize(
    ("number", "shown", "as_json"),
    [
        (1000000.5, "1.0000005e+06", "1000000.5"),
        (1.5e-7, "1.5e-07", "1.5e-7"),
        (0.0001, "0.0001", "0.0001"),
        (0.00001, "1e-05", "0.00001"),
        (123456.7, "123456.7", "123456.7"),
        (1234567.5, "1.2345675e+06", "1234567.5"),
        (1e21 + 2**20, "1.000000000000001e+21", "1.000000000000001e+21"),
        (1.5e300, "1.5e+300", "1.5e+300"),
        (-2.5e-5, "-2.5e-05", "-0.000025"),
        (5e-324, "5e-324", "5e-324"),
        (1e6, "1e+06", "1000000"),
        (-0.0, "-0", "-0"),
        (float("inf"), "+Inf", None),
    ],
)
def test_floats_as_go_prints_them(number: float, shown: str, as_json: str | None) -> None:
    """What kubectl printed for these numbers in a provider object (measured)."""
    assert go_float(number) == shown
    if as_json is None:
        with pytest.raises(TemplateError, match=r"json: unsupported value: \+Inf"):
            run("{.x}", {"x": [number]})
    else:
        assert go_json(number) == as_json


def test_a_dumps_unquoted_timestamps_are_the_text_the_api_holds() -> None:
    """YAML reads `creationTimestamp: 2026-11-20T09:00:00Z` (unquoted) as a datetime."""
    data = {"items": [{"t": datetime(2026, 11, 20, 9, tzinfo=UTC), "d": date(2026, 11, 20)}]}
    assert run("{.items[0].t} {.items[0].d} {.items[0]}", data) == (
        '2026-11-20T09:00:00Z 2026-11-20 {"d":"2026-11-20","t":"2026-11-20T09:00:00Z"}'
    )
    assert run('{.items[?(@.t == "2026-11-20T09:00:00Z")].d}', data) == "2026-11-20"
    later = {"t": datetime(2026, 11, 21, tzinfo=UTC)}
    assert order([later, data["items"][0], {"t": "2026-11-20T10:00:00Z"}], ".t") == [1, 2, 0]


def test_sprint_is_gos_fmt() -> None:
    assert sprint({"b": [1, None], "a": {"c": "d e"}}) == "map[a:map[c:d e] b:[1 <nil>]]"
    assert sprint(None) == "<nil>"
    assert sprint(2.5e-7) == "2.5e-07"


@pytest.mark.parametrize(
    ("template", "why"),
    [
        ("{.a", "unclosed action"),
        ("{.a\n}", "unclosed action"),
        ("{.a[0}", "unterminated array"),
        ('{.a["x"]}', 'invalid array index "x"'),
        ("{.a !}", "unrecognized character in action: U+0021 '!'"),
        ("{.a\t}", "unrecognized character in action: U+0009"),
        ("{....a}", "invalid multiple recursive descent"),
        ("{1.2.3}", "cannot parse number 1.2.3"),
        ('{"abc}', "unterminated quoted string"),
        ("{[?(@.a}", "unterminated filter"),
        ("{[?(@.a)x}", "unclosed array expect ]"),
        ('{"\\q"}', 'unquote string "\\q" error invalid syntax'),
        ("{[-]}", "array index - is not a number"),
        ("{[99999999999999999999]}", "array index 99999999999999999999 is not a number"),
    ],
)
def test_syntax_errors_are_kubectls(template: str, why: str) -> None:
    with pytest.raises(TemplateError) as raised:
        parse(template)
    shown = template.replace("\n", " ").replace("\t", " ")
    assert raised.value.message == f"error parsing jsonpath {shown}, {why}"
    assert "kubectl/jsonpath" in (raised.value.hint or "")


@pytest.mark.parametrize(
    ("template", "why"),
    [
        ("{.list[5]}", "array index out of bounds: index 5, length 3"),
        ("{.list[1:9]}", "array index out of bounds: index 8, length 3"),
        ("{.map[0]}", "map[string]interface {} is not array or slice"),
        ("{.text[0]}", "string is not array or slice"),
        ("{.list[::0]}", "step must be > 0"),
        ("{.list[2:1]}", "starting index 2 is greater than ending index 1"),
        ("{end}", "not in range, nothing to end"),
        ("{range .list[*]}{end}{end}", "not in range, nothing to end"),
        ("{foo}", "unrecognized identifier foo"),
        ("{.list[?(@ == 1)]}", "incompatible types for comparison"),
        ("{.list[?(@ == 1.0)]}", "incompatible types for comparison"),
        ("{.bools[?(@ < true)]}", "invalid type for comparison"),
        ("{.lists[?(@[*] == 1)]}", "can only compare one element at a time"),
        ("{.list[?(@ <> 1)]}", "unrecognized filter operator <>"),
        ("{.map[?(@.x)]}", "map[string]interface {} is not array or slice and cannot be filtered"),
    ],
)
def test_execution_errors_are_kubectls(template: str, why: str) -> None:
    with pytest.raises(TemplateError) as raised:
        run(template, VALUES)
    assert raised.value.message == f'error executing jsonpath "{template}": {why}'


def test_relaxed_paths_are_kubectls() -> None:
    for path in (".metadata.name", "metadata.name", "{metadata.name}", "{.metadata.name}"):
        assert relaxed(path) == "{.metadata.name}"
    assert relaxed("") == ""
    with pytest.raises(TemplateError, match="unexpected path string"):
        relaxed("{.a}{.b}")


def test_the_budget_stops_a_template_that_would_never_end(monkeypatch) -> None:
    """Ranges never ended run what follows again after each loop: 2**60 passes here."""
    monkeypatch.setattr(limits, "MAX_VALUES", 50_000)
    with pytest.raises(TemplateError, match="more than 50000 values"):
        run("{range @}" * 60, {})
    monkeypatch.setattr(limits, "MAX_OUTPUT", 10_000)
    with pytest.raises(TemplateError, match="output passes"):
        run("{range .items[*]}{..}{end}")


def test_nesting_is_bounded() -> None:
    with pytest.raises(TemplateError, match="ranges nested too deeply"):
        run("{range @}" * 100 + "{end}" * 100, {})
    deep: Any = "leaf"
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(TemplateError, match="the data nests too deeply"):
        run("{@}", deep)
    with pytest.raises(TemplateError, match="the data nests too deeply"):
        columns.render(columns.from_spec("DEEP:.d"), [{"d": deep}], no_headers=True)
    # A filter in a quoted field name in a filter: pieces nest, a few deep at most, and a
    # stack that runs out first is an error too.
    nested = "{[?(@.x\"[?(@.y'[?(@.w)].v')].z\")]}"
    kept = {'x"': [{"y'": [{"w": 1, "v'": 1}], 'z"': 1}]}
    assert run(nested, [kept, {'x"': [{"y'": [{"v'": 1}], 'z"': 1}]}]) == go_json(kept)
    said = []
    limit = sys.getrecursionlimit()
    depth = len(inspect.stack())
    for room in range(15, 80):  # from a stack that runs out in the parser to one that does not
        sys.setrecursionlimit(depth + room)
        try:
            parse(nested)
            break
        except TemplateError as error:
            said.append(error.message)
        finally:
            sys.setrecursionlimit(limit)
    assert said
    assert said[-1] == f"error parsing jsonpath {nested}, it nests too deeply"


# -- custom columns ---------------------------------------------------------------------------


def test_custom_columns_as_kubectl_lays_them_out() -> None:
    """Go's fmt for maps and lists, values joined by commas, <none> for nothing found."""
    spec = columns.from_spec(
        "NAME:.metadata.name,R:{.summary.replicas.ready},FD:spec.failureDomains,"
        "NODES:.status.nodeRefs[*].name,LABELS:.metadata.labels"
    )
    nodes = ",".join(f"gke-default-node-{i}" for i in range(4))
    rows = [
        ["NAME", "R", "FD", "NODES"],
        ["asg-workers", "2", "[eu-west-1a eu-west-1b]", "asg-workers-node-0,asg-workers-node-1"],
        ["gke-default", "4", "<none>", nodes],
        ["pending-pool", "0", "<none>", "<none>"],
    ]
    widths = [15, 6, 26, len(nodes) + 3]  # the widest cell plus 3, at least 6
    labels = ["LABELS"] + ["map[cluster.x-k8s.io/cluster-name:prod]"] * 3
    assert columns.render(spec, POOLS["items"][:3], no_headers=False) == "".join(
        "".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)) + last + "\n"
        for row, last in zip(rows, labels, strict=True)
    )


def test_tabbed_is_kubectls_tabwriter() -> None:
    """Columns are the widest cell plus 3, at least 6; the last is not padded."""
    assert columns.tabbed([["A", "B", "C"], ["x", "", "z"]]) == "A     B     C\nx           z\n"
    assert columns.tabbed([]) == ""


def test_cells_show_controls_never_raw_and_stay_one_line() -> None:
    spec = columns.from_spec("V:.v")
    shown = columns.render(spec, [{"v": "a\x1bb\rc\nd\te"}], no_headers=True)
    assert shown == "a\\x1bb\\x0dc d e\n"


@pytest.mark.parametrize(
    ("spec", "why"),
    [
        ("", "custom-columns format specified but no custom columns given"),
        ("NAME", "unexpected custom-columns spec: NAME, expected <header>:<json-path-expr>"),
        ("NAME:{.a}{.b}", "unexpected path string"),
        ("NAME:.a[", "error parsing jsonpath {.a[}, unterminated array"),
    ],
)
def test_custom_columns_spec_errors(spec: str, why: str) -> None:
    with pytest.raises(TemplateError, match=why.replace("[", r"\[").replace("{", r"\{")):
        columns.from_spec(spec)


def test_custom_columns_file() -> None:
    spec = columns.from_file("NAME   READY\r\n.metadata.name   {.summary.replicas.ready}\n")
    assert [c.header for c in spec] == ["NAME", "READY"]
    assert columns.render(spec, POOLS["items"][:1], no_headers=False) == (
        "NAME          READY\nasg-workers   2\n"
    )
    for content, why in [
        ("", "missing header line"),
        ("NAME\n", "missing spec line"),
        ("A B\n.x\n", r"number of headers \(2\) and field specifications \(1\) don't match"),
    ]:
        with pytest.raises(TemplateError, match=why):
            columns.from_file(content)


# -- --sort-by --------------------------------------------------------------------------------


def order(items: list[Any], path: str) -> list[int]:
    return columns.sorted_order(items, columns.sort_template(path))


def test_sort_by_puts_missing_then_null_first_and_keeps_ties_in_order() -> None:
    items = [{"v": 2}, {}, {"v": None}, {"v": 1}, {"v": 2.5}, {}, {"v": 1}]
    assert order(items, ".v") == [1, 5, 2, 3, 6, 0, 4]


def test_sort_by_compares_quantities_by_amount_and_other_strings_as_text() -> None:
    items = [{"v": "10"}, {"v": "9"}, {"v": "100m"}, {"v": "1Ki"}, {"v": "b"}, {"v": "a"}]
    assert order(items, "{.v}") == [2, 1, 0, 3, 5, 4]
    assert order([{"v": "x"}, {"v": "10"}, {"v": "9"}], "v") == [2, 1, 0]  # x: not a quantity
    assert order([{"v": "1e3"}, {"v": "2k"}, {"v": "0.5Ki"}], "v") == [2, 0, 1]


@pytest.mark.parametrize(
    ("text", "amount"),
    [
        ("1Ki", Decimal(1024)),
        ("1.5Gi", Decimal(1610612736)),
        ("100m", Decimal("0.1")),
        ("1e3", Decimal(1000)),
        ("-", Decimal(0)),
        ("e5", Decimal(0)),
        ("", None),
        ("abc", None),
        ("1.5.5", None),
        ("1mi", None),
        ("1ee5", None),
        ("v1.33.4", None),
        ("1e" + "9" * 4301, None),  # int() of so many digits raised: not a quantity
    ],
)
def test_quantities_read_as_kubernetes_reads_them(text: str, amount: Decimal | None) -> None:
    assert columns.quantity(text) == amount


def test_sort_by_refuses_what_kubectl_cannot_sort() -> None:
    with pytest.raises(TemplateError, match=r'find any field with path "\{\.x\}"'):
        order([{}, {"y": 1}], ".x")
    for items, found in [
        ([{"v": {}}, {"v": {}}], "maps"),
        ([{"v": 1}, {"v": "a"}], "numbers and strings"),
        ([{"v": True}], "true/false"),
    ]:
        with pytest.raises(TemplateError, match=f"cannot sort by {{.v}}: it finds {found}"):
            order(items, ".v")
    assert order([], ".x") == []


HUGE = "9" * 5000


@pytest.mark.parametrize(
    "template",
    [f"{{.items[{HUGE}]}}", f"{{.items[1:{HUGE}]}}", f"{{.items[?(@.x=={HUGE})]}}", f"{{{HUGE}}}"],
)
def test_a_number_of_thousands_of_digits_is_a_template_error(template: str) -> None:
    """int() refuses over 4300 digits with a ValueError, which came out as a traceback."""
    with pytest.raises(TemplateError):
        parse(template)
