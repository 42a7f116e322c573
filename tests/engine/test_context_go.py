"""Kyverno's unit tests for the variable context, as table rows against this engine.

Sources (kyverno/kyverno, ``pkg/engine/context/``): ``context_test.go``, ``checkpoint_test.go``,
``deferred_test.go``, ``utils_test.go`` (``TestMergeMaps``) and ``loaders/configmap_test.go``, plus
``pkg/engine/utils/foreach_test.go`` (``Test_EvaluateList``) and ``pkg/engine/apicall/apiCall_test.go``
(``Test_CrossNamespaceAccess*``), and rows that pin behaviour read from the
code beside them: ``context.go`` (``AddServiceAccount``, ``AddImageInfos``, the context size limit),
``deferred.go`` (the loader matcher, the loading order), ``loaders/variable.go`` and
``loaders/configmap.go`` (results and error wording).

Kyverno's deferred loaders are translated as context entries: a mock loader that stores ``name=value``
is an ``apiCall`` entry answered by ``Mocks`` (which records every load as ``name=value``, like the Go
tests' event handler), and a mock loader that runs a query is a ``variable`` entry with that
``jmesPath``. Kyverno re-runs loaded loaders eagerly when it restores a checkpoint; this engine loads
them again lazily, at their next mention, so load counts are compared where a query follows.
Kyverno's ``Checkpoint``/``Restore``/``Reset`` are ``checkpoint()`` and ``restore()`` of the latest
checkpoint, popped or kept. Numbers are floats, as the CLI decodes JSON.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest

from scanner.engine.context import ContextError, VariableContext
from scanner.engine.context_images import compute_images
from scanner.engine.dotted import set_path, split_dotted
from scanner.engine.golang.fmt import text as go_text
from scanner.engine.jmespath.dialect import default_evaluator
from scanner.engine.jmespath.interpreter import JMESPathError
from scanner.engine.match import UserInfo
from scanner.engine.variables import SubstitutionError

# -- loaders and a step runner -------------------------------------------------------------


class Mocks:
    """A context loader: ``/mock/<name>=<json>`` API calls answer the JSON value and are recorded as
    ``name=value``; ConfigMaps come from ``config_maps`` ((namespace, name) -> ConfigMap)."""

    def __init__(self, config_maps: dict[tuple[str, str], dict] | None = None) -> None:
        self.events: list[str] = []
        self.config_maps = config_maps or {}

    def config_map(self, name: str, namespace: str) -> dict | None:
        self.events.append(f"configmap {namespace}/{name}")
        return self.config_maps.get((namespace, name))

    def api_call(self, url_path: str, method: str, data: Any) -> Any:
        name, _, raw = url_path.removeprefix("/mock/").partition("=")
        value = json.loads(raw)
        self.events.append(f"{name}={go_text(value)}")
        return value


def mock(name: str, value: Any) -> dict:
    """Go's ``addDeferred(ctx, name, value)``."""
    return {"name": name, "apiCall": {"urlPath": f"/mock/{name}={json.dumps(value)}"}}


def variable(name: str, **spec: Any) -> dict:
    return {"name": name, "variable": spec}


def add(*entries: dict) -> tuple:
    return ("add", entries)


def var(key: str, value: Any) -> tuple:
    """``AddVariable``: a dotted key written into the tree, maps merged (as values files are)."""
    return ("var", key, value)


def resource(obj: dict) -> tuple:
    """``AddResource``: ``request.object`` replaced."""
    return ("resource", obj)


def element(value: Any, index: int, depth: int) -> tuple:
    """``AddElement``, as the foreach code sets it."""
    return ("element", value, index, depth)


def q(expression: str, expected: Any) -> tuple:
    return ("query", expression, expected)


def fails(expression: str, message: str) -> tuple:
    return ("fails", expression, message)


def unknown(key: str) -> tuple:
    return fails(key, f'Unknown key "{key}" in path')


def touch(expression: str) -> tuple:
    """Go's ``ctx.deferred.LoadMatching(query)``: load what the text mentions, ignore the result."""
    return ("touch", expression)


def events(*names: str) -> tuple:
    """The loads since the last check, in order."""
    return ("events", list(names))


CHECKPOINT, RESTORE, RESET = ("checkpoint",), ("restore",), ("reset",)


def run(steps: list[tuple], ctx: VariableContext | None = None, loader: Mocks | None = None) -> None:
    """Run Go-style steps; ``Restore``/``Reset`` without a checkpoint do nothing, as in Go."""
    loader = loader or Mocks()
    ctx = ctx or VariableContext({}, default_evaluator(), loader)
    stack: list[Any] = []
    for step in steps:
        kind, *args = step
        if kind == "add":
            ctx.add_entries(list(args[0]))
        elif kind == "var":
            ctx.tree = set_path(ctx.tree, split_dotted(args[0]), args[1])
        elif kind == "resource":
            ctx.tree = set_path(ctx.tree, ["request", "object"], args[0], merge=False)
        elif kind == "element":
            value, index, depth = args
            ctx.set_all({"element": value, f"element{depth}": value,
                         "elementIndex": index, f"elementIndex{depth}": index})
        elif kind == "checkpoint":
            stack.append(ctx.checkpoint())
        elif kind == "restore" and stack:
            ctx.restore(stack.pop())
        elif kind == "reset" and stack:
            ctx.restore(stack[-1])
        elif kind == "query":
            assert ctx.query(args[0]) == args[1], step
        elif kind == "fails":
            with pytest.raises((JMESPathError, ContextError)) as caught:
                ctx.query(args[0])
            assert args[1] in str(caught.value), (step, str(caught.value))
        elif kind == "touch":
            with contextlib.suppress(JMESPathError, ContextError):
                ctx.query(args[0])
        elif kind == "events":
            assert loader.events == args[0], (step, loader.events)
            loader.events.clear()


def context_for(resource: dict, **kwargs: Any) -> VariableContext:
    return VariableContext.for_resource(resource, evaluator=default_evaluator(), **kwargs)


# -- context_test.go ------------------------------------------------------------------------

HOSTPATH_POD = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "image-with-hostpath", "labels": {"app.type": "prod", "namespace": "my-namespace"}},
    "spec": {"containers": [{"name": "image-with-hostpath", "image": "docker.io/nautiker/curl",
                             "volumeMounts": [{"name": "var-lib-etcd", "mountPath": "/var/lib"}]}],
             "volumes": [{"name": "var-lib-etcd", "emptyDir": {}}]},
}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        pytest.param("request.object.apiVersion", "v1", id="Test_addResourceAndUserContext-object"),
        pytest.param("request.userInfo.username", "system:serviceaccount:nirmata:user1",
                     id="Test_addResourceAndUserContext-username"),
        pytest.param("request.userInfo.uid", "014fbff9a07c", id="Test_addResourceAndUserContext-uid"),
        pytest.param("serviceAccountName", "user1", id="Test_addResourceAndUserContext-serviceAccountName"),
        pytest.param("serviceAccountNamespace", "nirmata", id="Test_addResourceAndUserContext-serviceAccountNamespace"),
    ],
)
def test_resource_and_user_context(query: str, expected: str) -> None:
    user = UserInfo(username="system:serviceaccount:nirmata:user1", uid="014fbff9a07c")
    assert context_for(HOSTPATH_POD, user=user).query(query) == expected


@pytest.mark.parametrize(
    ("username", "expected"),
    [
        pytest.param("system:serviceaccount:nirmata:user1", ("nirmata", "user1"), id="context.go-service-account"),
        pytest.param("system:serviceaccount:ns:name:extra", ("ns", "name"), id="context.go-two-first-fields"),
        pytest.param("system:serviceaccount:ns", ("", ""), id="context.go-one-field"),
        pytest.param("system:serviceaccount:", ("", ""), id="context.go-prefix-only"),
        pytest.param("alice", ("", ""), id="context.go-short-user"),
        # AddServiceAccount drops the prefix's length without checking the prefix
        pytest.param("oidc:someone@example.org:team:x", ("rg", "team"), id="context.go-prefix-not-checked"),
        pytest.param("system:serviceaccounts:ns:name", ("", "ns"), id="context.go-plural-prefix-shifts-the-fields"),
    ],
)
def test_service_account_variables(username: str, expected: tuple[str, str]) -> None:
    ctx = context_for(HOSTPATH_POD, user=UserInfo(username=username))
    assert (ctx.query("serviceAccountNamespace"), ctx.query("serviceAccountName")) == expected


@pytest.mark.parametrize(
    ("operation", "objects"),
    [
        pytest.param("CREATE", ["object"], id="context.go-create"),
        pytest.param("UPDATE", ["object", "oldObject"], id="context.go-update-old-object-is-the-resource"),
        pytest.param("DELETE", ["oldObject"], id="context.go-delete-has-no-object"),
    ],
)
def test_request(operation: str, objects: list[str]) -> None:
    """The CLI's admission request: the operation, the namespace, and the objects it carries."""
    ctx = context_for({**HOSTPATH_POD, "metadata": {"name": "p", "namespace": "ns"}}, operation=operation)
    assert ctx.query("request.operation") == operation
    assert ctx.query("request.namespace") == "ns"
    assert [k for k in ("object", "oldObject") if k in ctx.tree["request"]] == objects
    assert all(ctx.tree["request"][k]["metadata"]["name"] == "p" for k in objects)


@pytest.mark.parametrize(
    ("key", "value", "query", "expected"),
    [
        pytest.param("simpleKey", "simpleValue", "simpleKey", "simpleValue", id="TestAddVariable-Simple variable"),
        pytest.param("nested.key", 123.0, "nested.key", 123.0, id="TestAddVariable-Nested variable"),
        pytest.param("complex.nested.key", {"innerKey": "innerValue"}, "complex.nested.key",
                     {"innerKey": "innerValue"}, id="TestAddVariable-Complex nested variable"),
        pytest.param("arrayKey", [1.0, 2.0, 3.0], "arrayKey", [1.0, 2.0, 3.0], id="TestAddVariable-Array value"),
        pytest.param("boolKey", True, "boolKey", True, id="TestAddVariable-Boolean value"),
        pytest.param("nilKey", None, "nilKey", None, id="TestAddVariable-Nil value"),
        pytest.param('metadata.labels."com.example/my-label"', "foo", "metadata",
                     {"labels": {"com.example/my-label": "foo"}}, id="TestAddVariable-Escaped complex key"),
    ],
)
def test_add_variable(key: str, value: Any, query: str, expected: Any) -> None:
    """Values-file keys are ``AddVariable`` keys: CSV-split on dots, quotes keep a segment whole."""
    run([var(key, value), q(query, expected)])


def test_add_variable_invalid_key_format() -> None:
    """TestAddVariable-Invalid key format: the key is stored, but querying it does not compile."""
    run([var("invalid,key", "someValue"), fails("invalid,key", "incorrect query invalid,key: ")])


IMAGE_POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "test-pod", "namespace": "default"},
             "spec": {"containers": [{"name": "test_container", "image": "nginx:latest"}]}}
BAD_IMAGE_POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bad"},
                 "spec": {"containers": [{"name": "c", "image": "NGINX:1"}]}}


def test_image_info_loader() -> None:
    """Test_ImageInfoLoader: images are not in the context until a query mentions them."""
    ctx = context_for(IMAGE_POD)
    assert "images" not in ctx.tree
    assert ctx.query("images.containers.test_container.name") == "nginx"


def test_images_survive_checkpoint_and_restore() -> None:
    """TestContext_CheckpointRestoreImages (the part without custom extractors): images first loaded
    inside a checkpoint answer queries again after ``Reset`` and ``Restore``."""
    ctx = context_for(IMAGE_POD)
    outer = ctx.checkpoint()
    assert ctx.query("images.containers.test_container.tag") == "latest"
    ctx.restore(outer)
    assert ctx.query("images.containers.test_container.name") == "nginx"
    ctx.restore(outer)
    assert ctx.query("images.containers.test_container.registry") == "docker.io"


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        # deferred.go: the images loader matches like any other: not after a '.'
        pytest.param("request.object.spec.images || 'none'", "none", id="deferred.go-images-after-dot-not-loaded"),
        pytest.param("request.object.metadata.myimages || 'none'", "none",
                     id="deferred.go-images-inside-word-not-loaded"),
    ],
)
def test_images_are_loaded_only_when_named(query: str, expected: str) -> None:
    assert context_for(BAD_IMAGE_POD).query(query) == expected


def test_image_error_is_the_extractor_error() -> None:
    """context.go ImageInfoLoader.LoadData returns the extractor's error as is; Query passes it on."""
    with pytest.raises(ValueError) as expected:
        compute_images(BAD_IMAGE_POD)
    with pytest.raises(ContextError) as caught:
        context_for(BAD_IMAGE_POD).query("images.containers.c.tag")
    assert str(caught.value) == str(expected.value)


def _doubling_entries(levels: int) -> list[dict]:
    """The amplification of Test_ContextSizeLimitBlocksExponentialAmplification: each entry joins the
    previous one with itself."""
    entries = [variable("l0", value="a" * 1000)]
    entries += [variable(f"l{i}", jmesPath=f"join('', [l{i - 1}, l{i - 1}])") for i in range(1, levels)]
    return entries


def test_context_size_limit_blocks_amplification() -> None:
    """Test_ContextSizeLimitBlocksExponentialAmplification with the CLI's default limit (2 MiB): the
    entries' JSON sizes add up, and the entry that passes the limit fails."""
    ctx = VariableContext({}, default_evaluator())
    ctx.add_entries(_doubling_entries(12))
    assert len(ctx.query("l10")) == 1000 * 2**10
    with pytest.raises(ContextError) as caught:
        ctx.query("l11")
    # 1002 + 2002 + ... + 1024002 = 2047022 bytes are stored; l11 would add 2048002
    assert str(caught.value) == "context size limit exceeded: 4095024 bytes exceeds limit of 2097152 bytes"


@pytest.mark.parametrize(
    ("sizes", "fails_at"),
    [
        pytest.param([5], None, id="Test_ContextSizeLimit-within limit"),
        pytest.param([3 * 1024 * 1024], 0, id="Test_ContextSizeLimit-exceeds limit single entry"),
        pytest.param([1024 * 1024, 1024 * 1024], 1, id="Test_ContextSizeLimit-exceeds limit cumulative"),
    ],
)
def test_context_size_limit(sizes: list[int], fails_at: int | None) -> None:
    """A string of n characters is n + 2 bytes of JSON; the sizes are never given back, not even when
    a checkpoint is restored (context.go keeps ``contextSize`` outside the checkpoints)."""
    ctx = VariableContext({}, default_evaluator())
    for i, size in enumerate(sizes):
        state = ctx.checkpoint()
        ctx.add_entries([variable(f"e{i}", value="x" * size)])
        if i == fails_at:
            with pytest.raises(ContextError, match=r"^context size limit exceeded: "):
                ctx.query(f"e{i}")
            return
        assert len(ctx.query(f"e{i}")) == size
        ctx.restore(state)
    assert fails_at is None


# -- checkpoint_test.go ---------------------------------------------------------------------

NEW_SECRET = {"metadata": {"name": "new-secret"}, "data": {"foo": "new"}}
OLD_SECRET = {"metadata": {"name": "new-secret"}, "data": {"foo": "old"}}
CONTAINER = {"name": "c1", "image": "nginx:latest"}

CHECKPOINT_CASES = [
    pytest.param([var("request.object", NEW_SECRET), var("request.oldObject", OLD_SECRET),
                  CHECKPOINT, resource(OLD_SECRET), RESTORE,
                  q("request.object.data.foo", "new"), q("request.oldObject.data.foo", "old")],
                 id="TestCheckpointIsolatesAddResource"),
    pytest.param([resource({"metadata": {"name": "pod", "labels": {"app": "test"}}}),
                  CHECKPOINT, var("request.object.metadata.labels.foo", "bar"), RESTORE,
                  q("request.object.metadata.labels", {"app": "test"})],
                 id="TestCheckpointIsolatesNestedMerge"),
    pytest.param([resource({"metadata": {"name": "initial"}}),
                  CHECKPOINT, var("request.object.metadata.rule", "outer"),
                  CHECKPOINT, var("request.object.metadata.rule", "inner"), RESTORE,
                  q("request.object.metadata.rule", "outer"), RESTORE,
                  q("request.object.metadata", {"name": "initial"})],
                 id="TestNestedCheckpointRestore"),
    pytest.param([resource({"metadata": {"name": "pod"}}),
                  CHECKPOINT, var("request.object.metadata.iteration", "first"), RESET,
                  var("request.object.metadata.iteration", "second"), RESET,
                  var("request.object.metadata.iteration", "third"), RESTORE,
                  q("request.object.metadata", {"name": "pod"})],
                 id="TestResetIsolatesNestedMutation"),
    pytest.param([resource({"metadata": {"name": "pod"}}),
                  CHECKPOINT, add(variable("myConfigMap", value={"key": "value"})),
                  q("myConfigMap.key", "value"), RESTORE,
                  fails("myConfigMap", 'Unknown key "myConfigMap"')],
                 id="TestCheckpointDropsRuleContext"),
    pytest.param([resource({"spec": {"containers": [CONTAINER]}}),
                  CHECKPOINT, element(CONTAINER, 0, 0), var("element.name", "mutated"),
                  q("element.name", "mutated"), RESTORE,
                  q("request.object.spec.containers[0].name", "c1"), unknown("element")],
                 id="TestCheckpointIsolatesElementAliasWrite"),
]


@pytest.mark.parametrize("steps", CHECKPOINT_CASES)
def test_checkpoints(steps: list[tuple]) -> None:
    run(steps)
    assert CONTAINER == {"name": "c1", "image": "nginx:latest"}


# -- utils_test.go: TestMergeMaps -----------------------------------------------------------


def test_merge_maps() -> None:
    """Data written at a key merges maps recursively; other values (lists too) replace."""
    tree = {"strVal": "bar2", "intVal": 3.0, "intVal2": 3.0, "arrayVal": ["1", "2", "3", "4"],
            "mapVal": {"foo1": "bar1", "foo2": "bar2"}}
    added = {"strVal": "bar1", "strVal2": "bar2", "intVal": 2.0, "arrayVal": ["1", "2", "3"],
             "mapVal": {"foo": "bar"}, "mapVal2": {"foo2": {"foo3": 3.0}}}
    for key, value in added.items():
        tree = set_path(tree, [key], value)
    assert tree == {"strVal": "bar1", "strVal2": "bar2", "intVal": 2.0, "intVal2": 3.0,
                    "arrayVal": ["1", "2", "3"], "mapVal": {"foo": "bar", "foo1": "bar1", "foo2": "bar2"},
                    "mapVal2": {"foo2": {"foo3": 3.0}}}


def test_merge_maps_requests() -> None:
    """TestMergeMaps, second half: merging keeps sibling keys; overwriting maps (AddElement) drops them."""
    tree = set_path({}, ["request"], {"object": {"foo": "bar"}})
    tree = set_path(tree, ["request"], {"object": {"foo": "bar2", "foo2": "bar2"}})
    tree = set_path(tree, ["request"], {"userInfo": "user1"})
    tree = set_path(tree, ["request"], {"object": {"foo": "bar3"}})
    assert tree == {"request": {"object": {"foo": "bar3", "foo2": "bar2"}, "userInfo": "user1"}}
    tree = set_path(tree, ["request"], {"object": {"foo": "bar4"}}, merge=False)
    assert tree == {"request": {"object": {"foo": "bar4"}}}


# -- deferred_test.go -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "text", "loads"),
    [
        pytest.param("one", "one<two", True, id="TestDeferredLoaderMatch-one<two"),
        pytest.param("one", "(one)", True, id="TestDeferredLoaderMatch-(one)"),
        pytest.param("one", "one.two.three", True, id="TestDeferredLoaderMatch-one.two.three"),
        pytest.param("one", "one-two", True, id="TestDeferredLoaderMatch-one-two"),
        pytest.param("one", "one; two; three", True, id="TestDeferredLoaderMatch-one; two; three"),
        pytest.param("one", "one>two", True, id="TestDeferredLoaderMatch-one>two"),
        pytest.param("one", "one, two, three", True, id="TestDeferredLoaderMatch-one, two, three"),
        pytest.param("one1", "one1", True, id="TestDeferredLoaderMatch-one1"),
        pytest.param("one", "oneTwoThree", False, id="TestDeferredLoaderMismatch-oneTwoThree"),
        pytest.param("one", "one1", False, id="TestDeferredLoaderMismatch-one1"),
        pytest.param("one", "one_two", False, id="TestDeferredLoaderMismatch-one_two"),
        pytest.param("one", "two.one", False, id="TestDeferredLoaderMismatch-two.one"),
        # deferred.go: (?:\A|\z|\s|[^.0-9A-Za-z])name\b, ASCII classes
        pytest.param("one", '"one-two"', True, id="deferred.go-a-quote-before-the-name"),
        pytest.param("one", "_one", True, id="deferred.go-an-underscore-before-the-name"),
        pytest.param("one", "x_one", True, id="deferred.go-an-underscore-inside-a-word"),
        pytest.param("one", "1one", False, id="deferred.go-a-digit-before-the-name"),
        pytest.param("one", "x.one", False, id="deferred.go-a-dot-before-the-name"),
        pytest.param("one", "\u00e9one", True, id="deferred.go-a-non-ascii-letter-before-the-name"),
        pytest.param("one", "one\u00e9", True, id="deferred.go-a-non-ascii-letter-after-the-name"),
    ],
)
def test_deferred_loader_matcher(name: str, text: str, loads: bool) -> None:
    run([add(mock(name, "1")), touch(text), events(*([f"{name}=1"] if loads else []))])


def _forloop() -> list[tuple]:
    steps = [add(mock("value", -1.0)), CHECKPOINT]
    for i in range(5):
        steps += [q("value", float(i - 1)), RESET, add(mock("value", float(i))), q("value", float(i)),
                  # the entry loaded before the checkpoint loads again, then the new one
                  events(*(["value=-1"] if i else ["value=-1", "value=-1"]), f"value={i}")]
    return [*steps, RESTORE, q("value", -1.0), events("value=-1")]


DEFERRED_CASES = [
    pytest.param([add(mock("one", "1")), events(), q("one", "1"), events("one=1"), q("one", "1"), events()],
                 id="TestDeferredLoaderMatch"),
    pytest.param([add(mock("one", "1")), unknown("oneTwoThree"), unknown("one1"), unknown("one_two"),
                  fails('"one-two"', 'Unknown key "one-two" in path'),
                  var("two.one", "0"), q("two.one", "0"), q("one.two.three", None), q("one", "1")],
                 id="TestDeferredLoaderMismatch"),
    pytest.param([add(mock("value", "0")), CHECKPOINT, q("value", "0"), RESET, q("value", "0")],
                 id="TestDeferredReset"),
    pytest.param([CHECKPOINT, add(mock("unused", "unused"), mock("one", "1")), RESTORE, events(),
                  touch("unused"), unknown("unused"), touch("one"), unknown("one"), events(),
                  add(mock("one", "1")), CHECKPOINT, q("one", "1"), RESTORE, q("one", "1"), RESTORE,
                  q("one", "1"), events("one=1", "one=1"),
                  add(mock("one", "1")), CHECKPOINT, q("one", "1"), events("one=1"),
                  add(mock("two", "2")), q("two", "2"), events("two=2"),
                  RESTORE, q("one", "1"), events("one=1"), q("one", "1"), events(), unknown("two"),
                  CHECKPOINT, q("one", "1"), events(), unknown("two"),
                  add(mock("three", "3")), q("three", "3"), events("three=3"),
                  RESET, q("one", "1"), events(), unknown("two"), unknown("three")],
                 id="TestDeferredCheckpointRestore"),
    pytest.param(_forloop(), id="TestDeferredForloop"),
    pytest.param([add(mock("value", "0")), RESET, q("value", "0"), add(mock("value", "0")), RESTORE,
                  q("value", "0")],
                 id="TestDeferredInvalidReset"),
    pytest.param([add(mock("value", "0")), CHECKPOINT, add(mock("leak", "leak")), RESET, unknown("leak"),
                  add(mock("value", "0")), CHECKPOINT, add(mock("leak", "leak")), RESTORE, unknown("leak")],
                 id="TestDeferredValidResetRestore"),
    pytest.param([add(mock("value", "0"), mock("value", "1")), q("value", "1"), events("value=0", "value=1")],
                 id="TestDeferredSameName"),
    # the Go mock stores its value before it queries; here the value comes from AddVariable
    pytest.param([var("value", "0"), add(variable("value", jmesPath="value")), CHECKPOINT, q("value", "0")],
                 id="TestDeferredRecursive"),
    pytest.param([add(mock("foo", "foo"), variable("one", jmesPath="foo")), q("one", "foo")],
                 id="TestJMESPathDependency"),
    pytest.param([add(mock("foo", "foo")), CHECKPOINT, add(mock("foo", "bar")), q("foo", "bar")],
                 id="TestDeferredHiddenEval"),
    pytest.param([add(mock("foo", "foo"), variable("one", jmesPath="foo")), CHECKPOINT, add(mock("foo", "bar")),
                  q("one", "foo")],
                 id="TestDeferredNotHidden"),
    pytest.param([add(mock("foo", "foo"), variable("one", jmesPath="foo"), mock("foo", "baz")), CHECKPOINT,
                  add(mock("foo", "bar")), q("one", "foo"), q("foo", "bar"), RESTORE,
                  q("one", "foo"), q("foo", "baz")],
                 id="TestDeferredNotHiddenOrdered"),
    # deferred.go: while an entry loads, only entries registered before it may load (match(..., index));
    # each finished load clears that bound (setLevelAndIndex(-1, -1)), not back to the outer entry's
    pytest.param([add(variable("a", jmesPath="b"), mock("b", "1")),
                  fails("a", 'failed to apply jmespath b to variable <nil>: JMESPath query failed: '
                             'Unknown key "b" in path'),
                  events(), q("b", "1")],
                 id="deferred.go-an-entry-cannot-load-a-later-one"),
    pytest.param([add(mock("d", "x"), variable("a", value="{{ d }}-{{ late }}"), mock("late", "y")),
                  q("a", "x-y"), events("d=x", "late=y")],
                 id="deferred.go-after-a-nested-load-later-entries-load"),
    pytest.param([add(variable("a", value="{{ late }}"), mock("late", "y")),
                  fails("a", "failed to resolve late at path : JMESPath query failed: Unknown key"), events()],
                 id="deferred.go-before-any-nested-load-later-entries-wait"),
    # PR #8234: a failing loader fails the query with its own error
    pytest.param([add(variable("bad", jmesPath="nope")),
                  fails("bad || 'x'", 'failed to apply jmespath nope to variable <nil>: JMESPath query failed: '
                                      'Unknown key "nope" in path')],
                 id="deferred.go-a-loader-error-fails-the-query"),
    pytest.param([add(variable("bad", jmesPath="nope")), fails("bad", "failed to apply jmespath"),
                  q("bad || 'x'", "x"), CHECKPOINT, RESET, fails("bad", "failed to apply jmespath")],
                 id="deferred.go-a-failed-loader-is-not-retried-before-a-reset"),
]


@pytest.mark.parametrize("steps", DEFERRED_CASES)
def test_deferred_loading(steps: list[tuple]) -> None:
    run(steps)


def test_an_underscore_before_the_name_runs_a_failing_loader() -> None:
    """deferred.go: ``_one`` mentions ``one``; a failing ``one`` fails the query even where ``_one``
    alone would be absorbed."""
    run([add(variable("one", jmesPath="nope")),
         fails("x_one || 'fallback'", "failed to apply jmespath nope to variable <nil>")])


# -- loaders/variable.go --------------------------------------------------------------------

VARIABLE_POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "labels": {"tier": "db"}},
                "spec": {"replicas": 3.0}}


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        pytest.param({"value": "v"}, "v", id="variable.go-value"),
        pytest.param({"value": {"a": "{{ request.object.metadata.name }}"}}, {"a": "web"},
                     id="variable.go-value-substituted"),
        pytest.param({"value": {"a": [1.0, 2.0]}, "jmesPath": "a[1]"}, 2.0, id="variable.go-value-and-jmesPath"),
        pytest.param({"value": {"a": 1.0}, "jmesPath": "b", "default": "d"}, "d",
                     id="variable.go-value-and-jmesPath-error-gives-default"),
        pytest.param({"jmesPath": "request.object.metadata.labels.tier"}, "db",
                     id="variable.go-jmesPath-on-the-context"),
        pytest.param({"jmesPath": "request.object.metadata.labels.nope", "default": "d"}, "d",
                     id="variable.go-jmesPath-error-gives-default"),
        pytest.param({"jmesPath": "request.object.metadata.labels.tier == 'x' && 'y' || null", "default": "d"}, "d",
                     id="variable.go-jmesPath-null-gives-default"),
        pytest.param({"jmesPath": "request.object.metadata.{{ 'labels' }}.tier"}, "db",
                     id="variable.go-jmesPath-substituted-first"),
        pytest.param({"jmesPath": "request.object.nope", "default": "{{ request.object.metadata.name }}"}, "web",
                     id="variable.go-default-substituted"),
        pytest.param({"jmesPath": "missing", "default": "d"}, "d",
                     id="variable.go-a-failing-entry-behind-the-query-gives-default"),
    ],
)
def test_variable_entry(spec: dict, expected: Any) -> None:
    ctx = context_for(VARIABLE_POD)
    ctx.add_entries([variable("missing", jmesPath="request.object.nope"), variable("x", **spec)])
    assert ctx.query("x") == expected


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        pytest.param({"jmesPath": "request.object.metadata.labels.nope"},
                     'failed to apply jmespath request.object.metadata.labels.nope to variable <nil>: '
                     'JMESPath query failed: Unknown key "nope" in path',
                     id="variable.go-jmesPath-error-without-default"),
        pytest.param({"jmesPath": "request.object.metadata.labels.tier == 'x' && 'y' || null"},
                     "failed to add context entry for variable x since it evaluated to nil",
                     id="variable.go-jmesPath-null-without-default"),
        pytest.param({"value": {"a": 1.0}, "jmesPath": "b"},
                     'failed to apply jmespath b to variable map[a:1]: Unknown key "b" in path',
                     id="variable.go-value-and-jmesPath-error-without-default"),
        pytest.param({"value": {"a": None}, "jmesPath": "a", "default": "d"},
                     "failed to add context entry for variable x since it evaluated to nil",
                     id="variable.go-value-and-jmesPath-null-is-kept-despite-default"),
        pytest.param({"value": "{{ request.object.metadata.labels.nope || null }}"},
                     "failed to add context entry for variable x since it evaluated to nil",
                     id="variable.go-value-null"),
        pytest.param({"jmesPath": "request.object.nope", "default": "{{ request.object.metadata.nope || null }}",
                      "value": None},
                     'failed to apply jmespath request.object.nope to variable <nil>: JMESPath query failed: ',
                     id="variable.go-default-and-value-null-are-absent"),
        pytest.param({"jmesPath": "{{ request.object.nope }}"},
                     "failed to substitute variables in context entry x {{ request.object.nope }}: failed to resolve "
                     'request.object.nope at path : JMESPath query failed: Unknown key "nope" in path',
                     id="variable.go-jmesPath-substitution-error"),
        pytest.param({"jmesPath": "{{ request.object.spec.replicas }}"},
                     "jmespath value must be a string x {{ request.object.spec.replicas }}: <nil>",
                     id="variable.go-jmesPath-not-a-string"),
        pytest.param({"jmesPath": "{{ request.object.a }}", "value": "{{ request.object.b }}"},
                     "failed to substitute variables in context entry x {{ request.object.a }}: ",
                     id="variable.go-jmesPath-substituted-before-value"),
        # Go prints the raw JSON field (*apiextensionsv1.JSON) with %v: its bytes
        pytest.param({"value": "{{ request.object.nope }}"},
                     "failed to substitute variables in context entry x &{[34 123 123 32 114 101 113 117 101 115 116 "
                     "46 111 98 106 101 99 116 46 110 111 112 101 32 125 125 34]}: failed to resolve "
                     "request.object.nope at path : ", id="variable.go-value-substitution-error"),
        pytest.param({"jmesPath": "request.object.nope", "default": {"d": "{{ request.object.nope }}"}},
                     "failed to substitute variables in context entry x &{[123 34 100 34 58 34 123 123 32 114 101 "
                     "113 117 101 115 116 46 111 98 106 101 99 116 46 110 111 112 101 32 125 125 34 125]}: failed to "
                     "resolve request.object.nope at path /d: ", id="variable.go-default-substitution-error"),
    ],
)
def test_variable_entry_errors(spec: dict, message: str) -> None:
    ctx = context_for(VARIABLE_POD)
    ctx.add_entries([variable("x", **spec)])
    with pytest.raises(ContextError) as caught:
        ctx.query("x")
    assert str(caught.value).startswith(message), str(caught.value)


def test_value_and_jmesPath_that_does_not_compile() -> None:
    """variable.go applyJMESPath: "failed to compile JMESPath: %s, error: %v"."""
    ctx = context_for(VARIABLE_POD)
    ctx.add_entries([variable("x", value="v", jmesPath="a[")])
    with pytest.raises(ContextError) as caught:
        ctx.query("x")
    assert str(caught.value).startswith("failed to apply jmespath a[ to variable v: failed to compile JMESPath: a[, ")


def test_a_loader_error_reaches_substitution_unwrapped() -> None:
    """Query returns the loader's error; SubstituteAll wraps it once."""
    ctx = context_for(VARIABLE_POD)
    ctx.add_entries([variable("x", jmesPath="request.object.nope")])
    with pytest.raises(SubstitutionError) as caught:
        ctx.substitute({"k": "{{ x }}"})
    assert str(caught.value) == ('failed to resolve x at path /k: failed to apply jmespath request.object.nope to '
                                 'variable <nil>: JMESPath query failed: Unknown key "nope" in path')


# -- loaders/configmap_test.go, loaders/configmap.go ----------------------------------------


def _cm(namespace: str, data: Any = None) -> dict:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "sensitive-config", "namespace": namespace}}
    return cm if data is None else {**cm, "data": data}


def _cm_entry(namespace: str, name: str = "sensitive-config") -> dict:
    return {"name": "testcm", "configMap": {"name": name, "namespace": namespace}}


@pytest.mark.parametrize(
    ("policy_namespace", "entry", "values", "expected"),
    [
        pytest.param("attacker-ns", _cm_entry("victim-ns"), {},
                     'context entry testcm: configMap namespace "victim-ns" is different from policy namespace '
                     '"attacker-ns"', id="Test_CrossNamespaceConfigMapAccess"),
        pytest.param("app-ns", _cm_entry("app-ns"), {}, "value", id="Test_SameNamespaceConfigMapAccess"),
        pytest.param("app-ns", _cm_entry(""), {}, "value",
                     id="Test_CrossNamespaceConfigMapAccess_EmptyNamespaceDefaultsToPolicyNS"),
        pytest.param("", _cm_entry("any-ns"), {}, "value",
                     id="Test_CrossNamespaceConfigMapAccess_ClusterPolicyUnrestricted"),
        pytest.param("attacker-ns", _cm_entry("{{ targetNs }}"), {"targetNs": "victim-ns"},
                     'context entry testcm: configMap namespace "victim-ns" is different from policy namespace '
                     '"attacker-ns"', id="Test_CrossNamespaceConfigMapAccess_WithVariableSubstitution"),
        pytest.param("app-ns", _cm_entry("{{ targetNs }}"), {"targetNs": 123.0},
                     "failed to substitute variables in context testcm configMap.namespace {{ targetNs }}: "
                     "expected string, got float64", id="Test_ConfigMapAccess_WithNonStringNamespaceSubstitution"),
        pytest.param("app-ns", _cm_entry("app-ns", "{{ cmName }}"), {"cmName": 123.0},
                     "failed to substitute variables in context testcm configMap.name {{ cmName }}: "
                     "expected string, got float64", id="Test_ConfigMapAccess_WithNonStringNameSubstitution"),
        # configmap.go wording
        pytest.param("", _cm_entry("default"), {},
                     'failed to retrieve config map for context entry testcm: failed to get configmap '
                     'default/sensitive-config : configmaps "sensitive-config" not found', id="configmap.go-not-found"),
        pytest.param("", _cm_entry("{{ request.object.nope }}"), {},
                     "failed to retrieve config map for context entry testcm: failed to substitute variables in "
                     "context testcm configMap.namespace {{ request.object.nope }}: failed to resolve "
                     'request.object.nope at path : JMESPath query failed: Unknown key "nope" in path',
                     id="configmap.go-substitution-error"),
        pytest.param("", _cm_entry(""), {}, "default-value", id="configmap.go-cluster-policy-defaults-to-default"),
    ],
)
def test_config_map_entry(policy_namespace: str, entry: dict, values: dict, expected: str) -> None:
    """The Go tests also assert that a refused namespace is never asked for; offline the source is
    asked first (it has no side effect), so only the outcome is compared."""
    config_maps = {(ns, "sensitive-config"): _cm(ns, {"key": "value"}) for ns in ("victim-ns", "app-ns", "any-ns")}
    config_maps[("default", "sensitive-config")] = _cm("default", {"key": "default-value"})
    if "not found" in expected:
        config_maps.pop(("default", "sensitive-config"))
    loader = Mocks(config_maps)
    ctx = context_for({}, values=values, loader=loader, policy_namespace=policy_namespace)
    ctx.add_entries([entry])
    if expected in ("value", "default-value"):
        assert ctx.query("testcm.data.key") == expected
        namespace = policy_namespace or entry["configMap"]["namespace"] or "default"
        assert loader.events == [f"configmap {namespace}/sensitive-config"]  # resolver.gotNS, gotName
        return
    with pytest.raises(ContextError) as caught:
        ctx.query("testcm.data.key")
    assert expected in str(caught.value)
    assert str(caught.value).startswith("failed to retrieve config map for context entry testcm: ")


@pytest.mark.parametrize(
    ("data", "query", "expected"),
    [
        pytest.param({"key": "value"}, "testcm.data", {"key": "value"}, id="configmap.go-data"),
        # obj.Data is a nil map when the ConfigMap has no data: JSON null, and fields of null are null
        pytest.param(None, "testcm.data", None, id="configmap.go-no-data-is-null"),
        pytest.param(None, "testcm.data.key || 'none'", "none", id="configmap.go-no-data-key-is-null"),
        pytest.param({"key": "value"}, "testcm.metadata.name", "sensitive-config", id="configmap.go-metadata"),
    ],
)
def test_config_map_data(data: Any, query: str, expected: Any) -> None:
    ctx = context_for({}, loader=Mocks({("default", "sensitive-config"): _cm("default", data)}))
    ctx.add_entries([_cm_entry("default")])
    assert ctx.query(query) == expected


def test_config_map_counts_against_the_size_limit() -> None:
    """configmap.go: "failed to add config map for context entry %s: %v" around AddContextEntry's error."""
    big = _cm("default", {"key": "x" * (3 * 1024 * 1024)})
    ctx = context_for({}, loader=Mocks({("default", "sensitive-config"): big}))
    ctx.add_entries([_cm_entry("default")])
    with pytest.raises(ContextError) as caught:
        ctx.query("testcm.data.key")
    assert str(caught.value).startswith("failed to add config map for context entry testcm: "
                                        "context size limit exceeded: ")


# -- apicall/apiCall_test.go: Test_CrossNamespaceAccess* (the fix of CVE-2026-22039) ----------


class AnyPath:
    """Go's ``mockClient``: every API path answers ``{}``; a ``missing`` path fails as not found."""

    def __init__(self, missing: str = "") -> None:
        self.missing = missing

    def config_map(self, name: str, namespace: str) -> dict | None:
        return None

    def api_call(self, url_path: str, method: str, data: Any) -> Any:
        if url_path == self.missing:
            raise ContextError(f"failed to GET resource with raw url: {url_path}: not found")
        return {}


def _api_entry(url_path: str = "/api/v1/namespaces/kube-system/secrets/top-secret", **spec: Any) -> dict:
    return {"name": "test", "apiCall": {"urlPath": url_path, "method": "GET", **spec}}


OTHER_NAMESPACE = "refers to namespace kube-system, which is different from the policy namespace default"
NO_NAMESPACE = "does not contain a namespace segment, which is required for namespaced policies"


@pytest.mark.parametrize(
    ("policy_namespace", "entry", "expected"),
    [
        pytest.param("default", _api_entry(), OTHER_NAMESPACE, id="namespaced-policy-reaches-another-namespace"),
        pytest.param("kube-system", _api_entry(), {}, id="namespaced-policy-reaches-its-own-namespace"),
        pytest.param("default", _api_entry("/api/v1/nodes"), NO_NAMESPACE, id="namespaced-policy-reaches-cluster-scope"),
        pytest.param("", _api_entry(), {}, id="cluster-policy-reaches-any-namespace"),
        pytest.param("default", _api_entry("/api/v1/namespaces/{{ targetNs }}/secrets/mysecret"), OTHER_NAMESPACE,
                     id="with-variable-substitution-to-another-namespace"),
        pytest.param("kube-system", _api_entry("/api/v1/namespaces/{{ targetNs }}/secrets/mysecret"), {},
                     id="with-variable-substitution-to-its-own-namespace"),
        # the path is checked unescaped and cleaned, as the API server reads it
        pytest.param("default", _api_entry("/api/v1/namespaces/default/../../namespaces/kube-system/secrets"),
                     "path /api/v1/namespaces/kube-system/secrets " + OTHER_NAMESPACE, id="dot-dot-leaves-the-namespace"),
        pytest.param("default", _api_entry("/api/v1/namespaces/default/..%2F..%2Fnamespaces%2Fkube-system/secrets"),
                     OTHER_NAMESPACE, id="escaped-slashes-leave-the-namespace"),
        pytest.param("default", _api_entry("/apis/apps/v1/namespaces/default/deployments"), {},
                     id="group-path-in-its-own-namespace"),
        pytest.param("default", _api_entry("/api/v1/namespaces/default/%zz"), 'invalid URL escape "%zz"',
                     id="malformed-escape-is-refused"),
        # the check is a failed fetch: a default replaces it, and it comes before the source's own error
        pytest.param("default", _api_entry(default={"fallback": True}), {"fallback": True},
                     id="default-replaces-a-refused-path"),
        pytest.param("default", _api_entry("/api/v1/namespaces/kube-system/secrets/missing"), OTHER_NAMESPACE,
                     id="refused-before-not-found"),
        # a service call has no API server path
        pytest.param("default", {"name": "test", "apiCall": {"service": {"url": "https://example.com/x"}}}, {},
                     id="service-call-is-not-an-api-path"),
    ],
)
def test_api_call_namespace_scope(policy_namespace: str, entry: dict, expected: Any) -> None:
    ctx = context_for({}, values={"targetNs": "kube-system"},
                      loader=AnyPath("/api/v1/namespaces/kube-system/secrets/missing"),
                      policy_namespace=policy_namespace)
    ctx.add_entries([entry])
    if not isinstance(expected, str):
        assert ctx.query("test") == expected
        return
    with pytest.raises(ContextError) as caught:
        ctx.query("test")
    assert expected in str(caught.value)


# -- pkg/engine/utils/foreach_test.go: Test_EvaluateList -------------------------------------


@pytest.mark.parametrize(
    ("data", "list_expression", "expected"),
    [
        pytest.param(["test-value-1", "test-value-2"], "test_object", ["test-value-1", "test-value-2"],
                     id="Test_EvaluateList-slice data"),
        pytest.param({"test-key-1": "test-value-1", "test-key-2": "test-value-2"},
                     "test_object.items(@, 'key', 'value')",
                     [{"key": "test-key-1", "value": "test-value-1"}, {"key": "test-key-2", "value": "test-value-2"}],
                     id="Test_EvaluateList-map data"),
        pytest.param({"test-key-1": "test-value-1", "test-key-2": "test-value-2"},
                     "test_object.items(@, 'another-key', 'another-value')",
                     [{"another-key": "test-key-1", "another-value": "test-value-1"},
                      {"another-key": "test-key-2", "another-value": "test-value-2"}],
                     id="Test_EvaluateList-map data with custom fields"),
    ],
)
def test_evaluate_list(data: Any, list_expression: str, expected: list) -> None:
    ctx = VariableContext({}, default_evaluator(), Mocks())
    ctx.add_entries([mock("test_object", data)])
    assert ctx.search(list_expression) == expected


# -- rule scoping (handlers/validation: a checkpoint per rule and per foreach element) -------


def _images_policy(validate: dict) -> Any:
    from scanner.engine.policy import parse_policy

    rules = [{"name": name, "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
              "context": [{"name": "n", "variable": {"value": name}}], "validate": validate}
             for name in ("first", "second")]
    return parse_policy({"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": {"name": "p"},
                         "spec": {"background": False, "rules": rules}})


@pytest.mark.parametrize(
    "validate",
    [
        pytest.param({"message": "{{ n }}: {{ images.containers.test_container.tag }}",
                      "deny": {"conditions": {"any": [{"key": "{{ images.containers.test_container.tag }}",
                                                       "operator": "Equals", "value": "latest"}]}}},
                     id="context.go-each-rule-with-context-sees-the-images"),
        pytest.param({"message": "{{ n }}: {{ images.containers.test_container.tag }}", "foreach": [{
                         "list": "request.object.spec.containers", "context": [{"name": "e", "variable": {"value": 1}}],
                         "deny": {"conditions": {"any": [{"key": "{{ images.containers.test_container.tag }}",
                                                          "operator": "Equals", "value": "latest"}]}}}]},
                     id="context.go-each-foreach-element-sees-the-images"),
    ],
)
def test_images_in_every_rule_scope(validate: dict) -> None:
    """TestContext_CheckpointRestoreImages at rule level: the images loaded in one rule's scope are
    loaded again in the next one."""
    from scanner.engine.evaluate import evaluate_policy

    results = evaluate_policy(_images_policy(validate), IMAGE_POD, None)
    assert [(r.rule, str(r.status), r.message.removeprefix("validation failure: ")) for r in results] == \
        [("first", "fail", "first: latest"), ("second", "fail", "second: latest")]
