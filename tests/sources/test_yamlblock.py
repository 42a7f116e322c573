"""The block reader gives exactly what the libyaml loader gives, or gives up; it never reads
text the loader refuses."""

from __future__ import annotations

import random

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from scanner.errors import ManifestError
from scanner.sources.kustomize.native_yaml import UnsupportedKustomization, parse_documents
from scanner.yamldoc import YamlLimits, iter_documents, read_block_documents
from tests.sources.test_yamldoc_construct import same


def loader_documents(text: str) -> list[tuple[int, object, int]] | str:
    """(index, data, line) of each document as the libyaml loader reads it (``keep_nodes``
    keeps the block reader out), or the loader's error."""
    try:
        return [(d.index, d.data, d.line) for d in iter_documents(text, keep_nodes=True)]
    except ManifestError as exc:
        return f"error: {exc.message}"


def block_documents(text: str) -> list[tuple[int, object, int]] | None:
    read = read_block_documents(text)
    from_bytes = read_block_documents(text.encode("utf-8", "surrogatepass"))  # as files are read
    assert (read is None) == (from_bytes is None) and (read is None or same(read, from_bytes)), text
    if read is None:
        return None
    return [(index, data, line) for index, (data, line) in enumerate(read) if data is not None]


def check(text: str) -> bool:
    """The block reader agrees with the loader; returns whether it read the text itself."""
    block = block_documents(text)
    if block is None:
        return False
    expected = loader_documents(text)
    assert not isinstance(expected, str), f"the block reader read text the loader refuses ({expected}):\n{text}"
    assert same(block, expected), f"{block!r} != {expected!r} for:\n{text}"
    return True


KUBECTL = '''\
apiVersion: apps/v1
kind: Deployment
metadata:
  annotations:
    deployment.kubernetes.io/revision: "3"
  creationTimestamp: "2025-01-24T05:51:26Z"
  generation: 3
  labels:
    app: web
  managedFields:
  - apiVersion: apps/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:spec:
        f:template:
          f:spec:
            f:containers:
              "k:{\\"name\\":\\"web\\"}":
                ".": {}
                f:image: {}
    manager: kubectl
    operation: Update
  name: web
  namespace: shop
spec:
  replicas: 2
  template:
    spec:
      containers:
      - args: ["--port", '8080', -v, 3]
        command:
        - /bin/sh
        - -c
        - |
          echo start

          exec web
        env:
        - name: EMPTY
          value: ""
        - name: QUOTE
          value: 'it''s'
        image: web:1.2
        ports:
        - containerPort: 8080
          protocol: TCP
        resources: {}
      nodeSelector: {}
      tolerations: []
status:
  availableReplicas: 2
'''

READ = {
    "kubectl-dump": KUBECTL,
    "go-yaml-v2-scalars": "a: yes\nb: No\nc: on\nd: 0777\ne: 0x1F\nf: 1_000\ng: ~\nh: null\ni: 2001-12-14\nj: 1.5\n"
                          "k: -3\nl: '0777'\nm: \"yes\"\nex: 1e3\no: +12\np: 0o17\nq: 0b101\nr: 18446744073709551615\n",
    "comments": "# head\na: 1 # one\n# between\nb:   two  # two\nc: x#y\n  # indented comment\nd: [a, b] # list\n",
    "documents": "# only a comment\n---\na: 1\n---\n---\n# empty\n--- # a comment\n- x\n- y\n",
    "implicit-first-document": "a: 1\n---\nb: 2\n",
    "trailing-marker": "a: 1\n---\n",
    "indented-root": "  a: 1\n  b:\n    c: 2\n",
    "sequence-at-key-indentation": "a:\n- 1\n- b: 2\n  c: 3\nd: 4\n",
    "nested-sequences": "a:\n  -\n    - 1\n  - 2\n  -\n  - b:\n      - c\n",
    "empty-values": "a:\nb:\n  c:\nd: ''\ne: \"\"\n",
    "literal-blocks": "a: |\n  one\n\n    two\n\n\nb: |-\n  three\n  four\nc:\n- |\n  five\nd: 1\n",
    "double-quoted-escapes": 'a: "tab\\there \\"q\\" back\\\\slash \\x41 \\u00e9 \\U0001F600 \\/"\nb: "\\n"\n',
    "flow-sequences": "a: []\nb: [ ]\nc: [1, two, \"three, four\", 'five']\nd: [true,no]\ne: {}\n",
    "unicode": "name: café\nnote: 日本語 ✓\n",
    "spaces-in-plain": "a: one  two   three\nb c: d\n",
    "colons-in-plain": "url: http://example.com:8080/x\ntime: 12:30\nimage: repo/app:v1\n",
    "dashes": "a: -1\nb: -x\nc: --flag\n",
}


@pytest.mark.parametrize("name", READ)
def test_block_reader_reads_common_manifests_as_the_loader_does(name: str) -> None:
    assert check(READ[name]), "the block reader gave up"


GIVES_UP = {
    "anchor": "a: &x 1\nb: *x\n",
    "alias-only": "b: *x\n",
    "tag": "a: !!str 1\n",
    "folded": "a: >\n  one\n  two\n",
    "keep-chomping": "a: |+\n  one\n\n",
    "indentation-indicator": "a: |2\n   one\n",
    "block-scalar-at-end-of-text": "a: |\n  one",
    "block-scalar-leading-empty-line": "a: |\n\n  one\n",
    "block-scalar-line-of-spaces": "a: |\n  one\n \n  two\n",
    "multi-line-plain": "a: one\n  two\n",
    "multi-line-quoted": "a: \"one\n  two\"\n",
    "flow-mapping": "a: {b: 1}\n",
    "nested-flow": "a: [[1]]\n",
    "flow-trailing-comma": "a: [1, ]\n",
    "flow-colon": "a: [b:c]\n",
    "tab": "a:\t1\n",
    "crlf": "a: 1\r\nb: 2\r\n",
    "bom": "\ufeffa: 1\n",
    "next-line": "a: 1\x85b: 2\n",
    "duplicate-key": "a: 1\na: 2\n",
    "merge-key": "a:\n  <<: {b: 1}\n",
    "boolean-key": "y: 1\n",
    "number-key": "1: a\n",
    "null-key": "~: a\n",
    "infinity": "a: .inf\n",
    "document-end": "a: 1\n...\n",
    "directive": "%YAML 1.1\n---\na: 1\n",
    "content-after-marker": "--- a\n",
    "scalar-document": "hello\n",
    "quoted-then-comment": "a: 'x' # c\n",
    "unknown-escape": 'a: "\\q"\n',
    "surrogate-escape": 'a: "\\ud800"\n',
    "complex-key": "? a\n: b\n",
    "compact-nested-sequence": "- - a\n",
    "mapping-in-value": "a: b: c\n",
    "value-ending-in-colon": "a: b:\n",
    "bad-indentation": "a:\n  b: 1\n c: 2\n",
    "sequence-after-scalar": "a: 1\n- b\n",
    "long-key": "k" * 1100 + ": v\n",
    "indicator-start": "a: @x\n",
    "dash-value": "a: - b\n",
    "control-character": "a: x\x01y\n",
    "delete-character": "a: x\x7fy\n",
    "c1-control": "a: x\x9by\n",
}


@pytest.mark.parametrize("name", GIVES_UP)
def test_block_reader_gives_up_beyond_its_subset(name: str) -> None:
    assert read_block_documents(GIVES_UP[name]) is None
    assert read_block_documents(GIVES_UP[name].encode()) is None


def test_block_reader_is_what_the_scanner_reads_manifests_with() -> None:
    docs = list(iter_documents(KUBECTL.encode(), "deploy.yaml"))
    assert [(d.index, d.line, d.node) for d in docs] == [(0, 1, None)]
    assert docs[0].data["spec"]["template"]["spec"]["containers"][0]["command"][2] == "echo start\n\nexec web\n"


def test_a_list_to_split_is_left_to_the_loader() -> None:
    text = "apiVersion: v1\nkind: List\nitems:\n- kind: Pod\n  metadata: {}\n- kind: Service\n"
    docs = list(iter_documents(text, split_lists=True))
    assert [(d.item, d.line, d.data["kind"]) for d in docs] == [(0, 4, "Pod"), (1, 6, "Service")]


def test_kustomize_files_keep_refusing_yaml_1_1_booleans() -> None:
    assert parse_documents("a: true\nb: [x]\n", "k.yaml") == [{"a": True, "b": ["x"]}]
    for text in ("a: yes\n", "a: [on]\n", "- n\n"):
        with pytest.raises(UnsupportedKustomization, match=r"YAML 1\.1 boolean"):
            parse_documents(text, "k.yaml")


SCALARS = st.one_of(
    st.sampled_from(["yes", "No", "on", "y", "~", "null", "", "0777", "0x1F", "1_000", "12:30", ".inf", "2001-12-14",
                     "<<", "a: b", "#c", "- x", "'q'", '"q"', "x y", " lead", "trail ", "multi\nline", "é", "-1",
                     "{}", "[]", "k:{\"a\":1}", "a #b", "[x]", "@a"]),
    st.text(max_size=10), st.integers(), st.booleans(), st.none(), st.floats(allow_nan=False, allow_infinity=False))
KEYS = st.one_of(st.sampled_from(["a", "b c", "f:spec", ".", "k:{\"name\":\"x\"}", "y", "1", "<<", "-a", "a:"]),
                 st.text(min_size=1, max_size=8))
DATA = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(KEYS, inner, max_size=4)), max_leaves=25)
STYLES = st.sampled_from([{}, {"indent": 4}, {"width": 20}, {"default_flow_style": None},
                          {"default_style": '"'}, {"default_style": "'"}, {"default_style": "|"},
                          {"explicit_start": True}, {"allow_unicode": True}, {"sort_keys": False}])


@settings(max_examples=300, deadline=None)
@given(st.lists(DATA, min_size=1, max_size=3), STYLES)
def test_block_reader_agrees_with_the_loader_on_dumped_data(documents: list, style: dict) -> None:
    check(yaml.safe_dump_all(documents, **style))


def edited(text: str, rnd: random.Random, edits: int) -> str:
    """``text`` with characters deleted or YAML syntax inserted at random places."""
    for _ in range(edits):
        position = rnd.randrange(len(text) + 1)
        if rnd.random() < 0.3 and position < len(text):
            text = text[:position] + text[position + 1:]
        else:
            text = text[:position] + rnd.choice(EDITS) + text[position:]
    return text


EDITS = [" ", "  ", "- ", ": ", ":", "#", " #", "'", '"', "|", "|-", "[", "]", "{}", "---", "\\", "-", "\n", "\n  "]


@settings(max_examples=600, deadline=None)
@given(DATA, STYLES, st.randoms(use_true_random=False), st.integers(1, 4))
def test_block_reader_never_reads_what_the_loader_refuses(data: object, style: dict, rnd: random.Random,
                                                           edits: int) -> None:
    text = yaml.safe_dump(data, **style)
    check(edited(text, rnd, edits))


@settings(max_examples=600, deadline=None)
@given(st.sampled_from([KUBECTL, *READ.values()]), st.randoms(use_true_random=False), st.integers(1, 3))
def test_block_reader_never_reads_what_the_loader_refuses_in_edited_manifests(text: str, rnd: random.Random,
                                                                             edits: int) -> None:
    check(edited(text, rnd, edits))


# scalars and keys the block reader reads, and (rarer) ones it gives up on
PLAIN = ["a", "web", "yes", "n", "0777", "1.5", "~", "", "x y", "-1", "a#b", "k:v", "--x", "{}", "[]", "[x]", "é",
         "[a, 'b,c', \"d\"]", "'s''q'", '"d\\"q\\t"', "|", "|-", "a :b", "v # note", "1e3", "0x1F", "2001-12-14"]
ODD = ["@x", "a: b", "[a, [b]]", "{a: 1}", "*x", "!t v", "&a v", '"\\q"', "'open", '"x" y', ".inf", "<<", ">", "|+",
       "|2", "? x", "%x", "'v' # note", "[a:b]"]
KEY_WORDS = ["a{}", "name{}", "f:spec{}", '"{}"', '".{}"', '"k:{{\\"n\\":\\"{}\\"}}"', "'q{}'", "a b{}",
             "app.kubernetes.io/name{}"]
ODD_KEYS = ["y", "1", "<<", "-k", "x:", "?", "a #b", "~"]


def generated(rnd: random.Random) -> str:
    """Random manifest-like text: nested block collections, every kind of scalar, literal
    blocks with blank and space-only lines, comments and markers, with uneven indentation."""
    lines: list[str] = []

    def scalar() -> str:
        text = rnd.choice(ODD if rnd.random() < 0.03 else PLAIN)
        return text + (" # c" if rnd.random() < 0.1 and "'" not in text and '"' not in text else "")

    def key() -> str:
        if rnd.random() < 0.02:
            return rnd.choice(ODD_KEYS) + ":"
        return rnd.choice(KEY_WORDS).format(rnd.randrange(1000)) + ":"

    def block(indent: int) -> None:
        width = indent + rnd.choice([0, 1, 2, 2, 3])
        for _ in range(rnd.randint(0, 4)):
            lines.append(rnd.choice(["", "", " " * rnd.randint(0, width + 2), " " * width + rnd.choice(PLAIN),
                                     " " * width + rnd.choice(PLAIN), " " * (width + 2) + "more",
                                     " " * width + "# not a comment"]))

    def node(indent: int, depth: int, in_sequence: bool) -> None:
        for _ in range(rnd.randint(1, 4)):
            pad = " " * max(0, indent + (rnd.choice([-1, 1]) if rnd.random() < 0.01 else 0))
            lead = pad + ("- " if in_sequence else "")
            if in_sequence and rnd.random() < 0.3 and depth:
                lines.append(lead + f"{key()} {scalar()}")
                node(indent + 2, depth - 1, False)
                continue
            key_text = "" if in_sequence else key()
            choice = rnd.random()
            if choice < 0.45 or not depth:
                lines.append(lead + key_text + (" " if key_text else "") + scalar())
                if lines[-1].rstrip().endswith(("|", "|-", "|+", ">", "|2")):
                    block(indent + 1)
            elif choice < 0.8:
                lines.append((lead + key_text).rstrip())
                node(indent + rnd.choice([0, 1, 2, 4]), depth - 1, rnd.random() < 0.4)
            else:
                lines.append(rnd.choice(["", "# comment", "  # indented", "---", "--- # doc", "..." if rnd.random() < 0.1 else ""]))

    for _ in range(rnd.randint(1, 3)):
        node(rnd.choice([0, 0, 0, 2]), 3, rnd.random() < 0.2)
        if rnd.random() < 0.5:
            lines.append(rnd.choice(["---", "--- # next", "---  "]))
    return "\n".join(lines) + ("\n" if rnd.random() < 0.9 else "")


@settings(max_examples=800, deadline=None)
@given(st.randoms(use_true_random=False))
def test_block_reader_agrees_with_the_loader_on_generated_text(rnd: random.Random) -> None:
    check(generated(rnd))


@pytest.mark.parametrize("max_depth", [1, 2, 3, 4, 6])
@pytest.mark.parametrize("leaf", ["x", "[x]", "{}", "|\n{pad}  x"])
def test_block_reader_keeps_the_depth_limit(max_depth: int, leaf: str) -> None:
    limits = YamlLimits(max_depth=max_depth)
    for depth in range(1, 8):
        lines = [f"{'  ' * level}k{level}:" for level in range(depth)]
        lines[-1] += " " + leaf.replace("{pad}", "  " * (depth - 1))
        text = "\n".join(lines) + "\n"
        outcomes = []
        for keep_nodes in (False, True):  # the block reader where it applies; libyaml
            try:
                outcomes.append([d.data for d in iter_documents(text, limits=limits, keep_nodes=keep_nodes)])
            except ManifestError as exc:
                outcomes.append(exc.message)
        assert outcomes[0] == outcomes[1], text
