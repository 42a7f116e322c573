"""Image references and the ``images`` variable checked against Kyverno's own unit-test tables.

Sources (Kyverno and the reference parser it uses):

* ``pkg/utils/image/infos_test.go``: Test_GetImageInfo, Test_ReferenceWithTag,
  Test_ReferenceAndReferenceWithTag, Test_ParseError, Test_addDefaultRegistry;
* ``pkg/engine/jmespath/functions_test.go``: Test_ImageNormalize;
* ``pkg/utils/api/image_test.go``: Test_extractImageInfo (standard pod-bearing kinds);
* ``github.com/distribution/reference`` ``reference_test.go``: TestReferenceParse and
  TestDomainAndPath, read through Kyverno's ``GetImageInfo`` (default registry ``docker.io``
  prepended first, so the expected registry/path below are Kyverno's, not the bare parser's);
* ``github.com/opencontainers/go-digest`` v1.0.0 digest validation (``Digest.Validate``);
* Kyverno issue 10438 / PR 14632 (registry host with ``_``).

Kyverno is run with its defaults: ``defaultRegistry: docker.io``,
``enableDefaultRegistryMutation: true``. Config variants of the Go tables (another default
registry, mutation disabled, a default registry with a path suffix, custom image extractors)
have no counterpart in the project and are not translated.

Deliberate spec choice (spec 7.5): the newest ``infos.go`` also prefixes a one-segment path
with ``library/`` (``nginx`` -> path ``library/nginx``, reference ``docker.io/library/nginx:latest``);
the spec states "without ``library/`` normalisation", as Kyverno's own test tables above still
expect, so the expectations here keep path ``nginx``.
"""

from __future__ import annotations

import pytest

from scanner.engine.context_images import compute_images
from scanner.engine.imageref import ImageReferenceError, parse_image
from scanner.engine.jmespath.dialect import Evaluator, compile_expression
from scanner.engine.jmespath.functions import build_functions
from scanner.engine.jmespath.interpreter import JMESPathError

DIGEST_DEAD = "sha256:dead07b4d8ed7e29e98de0f4504d87e8880d4347859d839686a31da35a3b532f"
FF64 = "f" * 64
SUFFIX = ", defaultRegistry: docker.io, enableDefaultRegistryMutation: true: "


def info_of(image: str) -> dict:
    i = parse_image(image)
    return {"registry": i.registry, "path": i.path, "name": i.name, "tag": i.tag, "digest": i.digest,
            "reference": i.reference, "referenceWithTag": i.reference_with_tag}


def parse_error(image: str) -> str:
    with pytest.raises(ImageReferenceError) as caught:
        parse_image(image)
    return str(caught.value)


# -- pkg/utils/image/infos_test.go: Test_GetImageInfo (name, path, registry, tag, digest, String()) --

GET_IMAGE_INFO = [
    ("nginx", "nginx", "nginx", "docker.io", "latest", "", "docker.io/nginx:latest"),
    ("nginx:v10.3", "nginx", "nginx", "docker.io", "v10.3", "", "docker.io/nginx:v10.3"),
    ("docker.io/test/nginx:v10.3", "nginx", "test/nginx", "docker.io", "v10.3", "", "docker.io/test/nginx:v10.3"),
    ("test/nginx", "nginx", "test/nginx", "docker.io", "latest", "", "docker.io/test/nginx:latest"),
    ("localhost:4443/test/nginx", "nginx", "test/nginx", "localhost:4443", "latest", "", "localhost:4443/test/nginx:latest"),
    ("docker.io/test/centos@" + DIGEST_DEAD, "centos", "test/centos", "docker.io", "", DIGEST_DEAD,
     "docker.io/test/centos@" + DIGEST_DEAD),
]


@pytest.mark.parametrize(("raw", "name", "path", "registry", "tag", "digest", "string"), GET_IMAGE_INFO,
                         ids=[row[0][:40] for row in GET_IMAGE_INFO])
def test_get_image_info(raw: str, name: str, path: str, registry: str, tag: str, digest: str, string: str) -> None:
    got = info_of(raw)
    assert (got["name"], got["path"], got["registry"], got["tag"], got["digest"], got["reference"]) == (
        name, path, registry, tag, digest, string)


# -- Test_ReferenceWithTag and Test_ReferenceAndReferenceWithTag --

REFERENCES = [
    ("nginx", "docker.io/nginx:latest", "docker.io/nginx:latest"),
    ("nginx:v10.3", "docker.io/nginx:v10.3", "docker.io/nginx:v10.3"),
    ("docker.io/test/nginx:v10.3", "docker.io/test/nginx:v10.3", "docker.io/test/nginx:v10.3"),
    ("test/nginx", "docker.io/test/nginx:latest", "docker.io/test/nginx:latest"),
    ("localhost:4443/test/nginx", "localhost:4443/test/nginx:latest", "localhost:4443/test/nginx:latest"),
    ("docker.io/test/centos@" + DIGEST_DEAD, "docker.io/test/centos@" + DIGEST_DEAD, "docker.io/test/centos:"),
]


@pytest.mark.parametrize(("raw", "reference", "with_tag"), REFERENCES, ids=[row[0][:40] for row in REFERENCES])
def test_reference_and_reference_with_tag(raw: str, reference: str, with_tag: str) -> None:
    got = info_of(raw)
    assert (got["reference"], got["referenceWithTag"]) == (reference, with_tag)


# -- Test_ParseError --

def test_parse_error_plus_plus() -> None:
    assert parse_error("++") == "bad image: docker.io/++" + SUFFIX + "invalid reference format"


# -- Test_addDefaultRegistry (rows with the docker.io default; read through registry/path) --

DEFAULT_REGISTRY = [
    ("docker.io/test/nginx:v10.4", "docker.io", "test/nginx"),
    ("test/nginx:v10.3", "docker.io", "test/nginx"),
    ("localhost/netd:v0.4.4-gke.0", "localhost", "netd"),
    ("myregistry.org/test/nginx:v10.3", "myregistry.org", "test/nginx"),
    ("test/centos@" + DIGEST_DEAD, "docker.io", "test/centos"),
    # the part before the first "/" decides: ".", ":", "localhost" or upper case keep it as registry
    ("registry:5000/app", "registry:5000", "app"),
    ("localhost:5000/app", "localhost:5000", "app"),
    ("localhostx/app", "docker.io", "localhostx/app"),
    ("Registry/app", "Registry", "app"),
    ("org/team/app", "docker.io", "org/team/app"),
    ("foo_bar/app", "docker.io", "foo_bar/app"),
]


@pytest.mark.parametrize(("raw", "registry", "path"), DEFAULT_REGISTRY, ids=[row[0][:40] for row in DEFAULT_REGISTRY])
def test_add_default_registry(raw: str, registry: str, path: str) -> None:
    got = info_of(raw)
    assert (got["registry"], got["path"]) == (registry, path)


# -- pkg/engine/jmespath/functions_test.go: Test_ImageNormalize --

EVALUATOR = Evaluator(build_functions())

IMAGE_NORMALIZE = [
    ("nginx", "docker.io/nginx:latest"),
    ("docker.io/nginx", "docker.io/nginx:latest"),
    ("docker.io/library/nginx", "docker.io/library/nginx:latest"),
    ("ghcr.io/library/nginx", "ghcr.io/library/nginx:latest"),
    ("ghcr.io/nginx", "ghcr.io/nginx:latest"),
    ("ghcr.io/nginx:latest", "ghcr.io/nginx:latest"),
    ("ghcr.io/nginx:1.2", "ghcr.io/nginx:1.2"),
    # a digest wins over a tag in the normalised form
    ("ghcr.io/nginx:1.2@sha256:" + FF64, "ghcr.io/nginx@sha256:" + FF64),
]


@pytest.mark.parametrize(("image", "expected"), IMAGE_NORMALIZE, ids=[row[0][:40] for row in IMAGE_NORMALIZE])
def test_image_normalize(image: str, expected: str) -> None:
    assert EVALUATOR.search(compile_expression(f"image_normalize('{image}')"), None) == expected


def test_image_normalize_empty_is_the_go_error() -> None:
    with pytest.raises(JMESPathError) as caught:
        EVALUATOR.search(compile_expression("image_normalize('')"), None)
    assert caught.value.message == ("JMESPath function 'image_normalize': bad image: docker.io/" + SUFFIX
                                    + "invalid reference format")


# -- distribution/reference reference_test.go: TestReferenceParse, through GetImageInfo --

OK = [
    # (input, registry, path, tag, digest)
    ("test_com", "docker.io", "test_com", "latest", ""),
    ("test.com:tag", "docker.io", "test.com", "tag", ""),
    ("test.com:5000", "docker.io", "test.com", "5000", ""),
    ("test.com/repo:tag", "test.com", "repo", "tag", ""),
    ("test:5000/repo", "test:5000", "repo", "latest", ""),
    ("test:5000/repo:tag", "test:5000", "repo", "tag", ""),
    ("test:5000/repo@sha256:" + FF64, "test:5000", "repo", "", "sha256:" + FF64),
    ("test:5000/repo:tag@sha256:" + FF64, "test:5000", "repo", "tag", "sha256:" + FF64),
    ("lowercase:Uppercase", "docker.io", "lowercase", "Uppercase", ""),
    # the bare parser's FIXME: an upper-case first component is taken as a domain name
    ("Uppercase/lowercase:tag", "Uppercase", "lowercase", "tag", ""),
    ("a/" * 127 + "a:tag-puts-this-over-max", "docker.io", "a/" * 127 + "a", "tag-puts-this-over-max", ""),
    ("sub-dom1.foo.com/bar/baz/quux", "sub-dom1.foo.com", "bar/baz/quux", "latest", ""),
    ("sub-dom1.foo.com/bar/baz/quux:some-long-tag", "sub-dom1.foo.com", "bar/baz/quux", "some-long-tag", ""),
    ("b.gcr.io/test.example.com/my-app:test.example.com", "b.gcr.io", "test.example.com/my-app", "test.example.com", ""),
    ("xn--n3h.com/myimage:xn--n3h.com", "xn--n3h.com", "myimage", "xn--n3h.com", ""),
    ("xn--7o8h.com/myimage:xn--7o8h.com@sha512:" + "f" * 128, "xn--7o8h.com", "myimage", "xn--7o8h.com",
     "sha512:" + "f" * 128),
    ("foo_bar.com:8080", "docker.io", "foo_bar.com", "8080", ""),
    ("foo/foo_bar.com:8080", "docker.io", "foo/foo_bar.com", "8080", ""),
    ("192.168.1.1", "docker.io", "192.168.1.1", "latest", ""),
    ("192.168.1.1:tag", "docker.io", "192.168.1.1", "tag", ""),
    ("192.168.1.1:5000", "docker.io", "192.168.1.1", "5000", ""),
    ("192.168.1.1/repo", "192.168.1.1", "repo", "latest", ""),
    ("192.168.1.1:5000/repo", "192.168.1.1:5000", "repo", "latest", ""),
    ("192.168.1.1:5000/repo:5050", "192.168.1.1:5000", "repo", "5050", ""),
    ("[2001:db8::1]/repo", "[2001:db8::1]", "repo", "latest", ""),
    ("[2001:db8:1:2:3:4:5:6]/repo:tag", "[2001:db8:1:2:3:4:5:6]", "repo", "tag", ""),
    ("[2001:db8::1]:5000/repo", "[2001:db8::1]:5000", "repo", "latest", ""),
    ("[2001:db8::1]:5000/repo:tag", "[2001:db8::1]:5000", "repo", "tag", ""),
    ("[2001:db8::1]:5000/repo@sha256:" + FF64, "[2001:db8::1]:5000", "repo", "", "sha256:" + FF64),
    ("[2001:db8::1]:5000/repo:tag@sha256:" + FF64, "[2001:db8::1]:5000", "repo", "tag", "sha256:" + FF64),
    ("[2001:db8::]:5000/repo", "[2001:db8::]:5000", "repo", "latest", ""),
    ("[::1]:5000/repo", "[::1]:5000", "repo", "latest", ""),
    # the repository length limit counts the path only, not the registry
    ("example.com/" + "a" * 255 + ":tag", "example.com", "a" * 255, "tag", ""),
    # TestDomainAndPath
    ("test.com/foo", "test.com", "foo", "latest", ""),
    ("test_com/foo", "docker.io", "test_com/foo", "latest", ""),
    ("test:8080/foo", "test:8080", "foo", "latest", ""),
    ("test.com:8080/foo", "test.com:8080", "foo", "latest", ""),
    ("test-com:8080/foo", "test-com:8080", "foo", "latest", ""),
    ("xn--n3h.com:18080/foo", "xn--n3h.com:18080", "foo", "latest", ""),
    # other digest algorithms go-digest knows
    ("repo@sha384:" + "a" * 96, "docker.io", "repo", "", "sha384:" + "a" * 96),
    ("repo:1@sha512:" + "0" * 128, "docker.io", "repo", "1", "sha512:" + "0" * 128),
]


@pytest.mark.parametrize(("raw", "registry", "path", "tag", "digest"), OK, ids=[row[0][:48] for row in OK])
def test_reference_parse_ok(raw: str, registry: str, path: str, tag: str, digest: str) -> None:
    got = info_of(raw)
    assert (got["registry"], got["path"], got["tag"], got["digest"]) == (registry, path, tag, digest)
    assert got["name"] == path.rsplit("/", 1)[-1]
    base = f"{registry}/{path}"
    assert got["reference"] == (f"{base}@{digest}" if digest else f"{base}:{tag}")
    assert got["referenceWithTag"] == f"{base}:{tag}"


INVALID = "invalid reference format"
UPPER = "repository name must be lowercase"
TOO_LONG = "repository name must not be more than 255 characters"
DIGEST_LENGTH = "invalid checksum digest length"
DIGEST_FORMAT = "invalid checksum digest format"
DIGEST_UNSUPPORTED = "unsupported digest algorithm"

ERRORS = [
    # (input, full name as Kyverno reports it, parser error)
    ("", "docker.io/", INVALID),
    (":justtag", "docker.io/:justtag", INVALID),
    ("@sha256:" + FF64, "docker.io/@sha256:" + FF64, INVALID),
    ("repo@sha256:" + "f" * 34, "docker.io/repo@sha256:" + "f" * 34, DIGEST_LENGTH),
    ("validname@invaliddigest:" + FF64, "docker.io/validname@invaliddigest:" + FF64, DIGEST_UNSUPPORTED),
    ("Uppercase:tag", "docker.io/Uppercase:tag", UPPER),
    ("test:5000/Uppercase/lowercase:tag", "test:5000/Uppercase/lowercase:tag", UPPER),
    ("domain/" + "a" * 256 + ":tag", "docker.io/domain/" + "a" * 256 + ":tag", TOO_LONG),
    ("a/" * 128 + "a:tag", "docker.io/" + "a/" * 128 + "a:tag", TOO_LONG),
    ("aa/asdf$$^/aa", "docker.io/aa/asdf$$^/aa", INVALID),
    ("[2001:db8::1]", "docker.io/[2001:db8::1]", INVALID),
    ("[2001:db8::1]:5000", "docker.io/[2001:db8::1]:5000", INVALID),
    ("[2001:db8::1]:tag", "docker.io/[2001:db8::1]:tag", INVALID),
    ("[fe80::1%eth0]:5000/repo", "[fe80::1%eth0]:5000/repo", INVALID),
    ("[fe80::1%@invalidzone]:5000/repo", "[fe80::1%@invalidzone]:5000/repo", INVALID),
    ("[1.2.3.4]/repo", "[1.2.3.4]/repo", INVALID),
    # go-digest v1.0.0 Validate: lower-case hex only, known algorithms, exact length
    ("repo@sha256:" + "F" * 64, "docker.io/repo@sha256:" + "F" * 64, DIGEST_FORMAT),
    ("repo@sha256:" + "f" * 65, "docker.io/repo@sha256:" + "f" * 65, DIGEST_LENGTH),
    ("repo@SHA256:" + FF64, "docker.io/repo@SHA256:" + FF64, DIGEST_FORMAT),
    ("repo@md5:" + "f" * 32, "docker.io/repo@md5:" + "f" * 32, DIGEST_UNSUPPORTED),
    ("repo@sha256+b64:" + FF64, "docker.io/repo@sha256+b64:" + FF64, DIGEST_UNSUPPORTED),
    # grammar details
    ("nginx:" + "t" * 129, "docker.io/nginx:" + "t" * 129, INVALID),
    ("nginx:-tag", "docker.io/nginx:-tag", INVALID),
    ("nginx@sha256:" + "f" * 31, "docker.io/nginx@sha256:" + "f" * 31, INVALID),
    ("Nginx", "docker.io/Nginx", UPPER),
    ("nginx ", "docker.io/nginx ", INVALID),
    (" nginx", "docker.io/ nginx", INVALID),
    ("-a.com/app", "-a.com/app", INVALID),
    ("a..b.com/app", "a..b.com/app", INVALID),
    ("ghcr.io/org//app", "ghcr.io/org//app", INVALID),
    ("ghcr.io/org/app/", "ghcr.io/org/app/", INVALID),
    ("ghcr.io/org/a___b", "ghcr.io/org/a___b", INVALID),
    ("Foo_bar.com/app", "Foo_bar.com/app", UPPER),
    # Kyverno issue 11143: a tag cannot hold ':'
    ("aws_account_id.dkr.ecr.region.amazonaws.com/docker-hub/app:sha256:" + FF64,
     "aws_account_id.dkr.ecr.region.amazonaws.com/docker-hub/app:sha256:" + FF64, INVALID),
]


@pytest.mark.parametrize(("raw", "full", "reason"), ERRORS, ids=[row[0][:48] or "empty" for row in ERRORS])
def test_reference_parse_errors(raw: str, full: str, reason: str) -> None:
    assert parse_error(raw) == f"bad image: {full}{SUFFIX}{reason}"


# -- Kyverno issue 10438 / PR 14632: a registry host with "_" is not a domain for the parser; --
# -- the name parses without one and Kyverno then takes the first path part as registry.     --

UNDERSCORE_REGISTRY = [
    ("aws_account_id.dkr.ecr.us-west-2.amazonaws.com/my-repository:tag",
     "aws_account_id.dkr.ecr.us-west-2.amazonaws.com", "my-repository", "my-repository", "tag", "",
     "aws_account_id.dkr.ecr.us-west-2.amazonaws.com/my-repository:tag"),
    ("my_registry.example.com/team/app@sha256:" + FF64,
     "my_registry.example.com", "team/app", "app", "", "sha256:" + FF64,
     "my_registry.example.com/team/app@sha256:" + FF64),
    ("844333597536.dkr.ecr.us-west-1.amazonaws.com/kyverno-demo:v1",
     "844333597536.dkr.ecr.us-west-1.amazonaws.com", "kyverno-demo", "kyverno-demo", "v1", "",
     "844333597536.dkr.ecr.us-west-1.amazonaws.com/kyverno-demo:v1"),
]


@pytest.mark.parametrize(("raw", "registry", "path", "name", "tag", "digest", "reference"), UNDERSCORE_REGISTRY,
                         ids=[row[0][:40] for row in UNDERSCORE_REGISTRY])
def test_registry_with_underscore(raw: str, registry: str, path: str, name: str, tag: str, digest: str,
                                  reference: str) -> None:
    got = info_of(raw)
    assert (got["registry"], got["path"], got["name"], got["tag"], got["digest"], got["reference"]) == (
        registry, path, name, tag, digest, reference)
    assert got["referenceWithTag"] == f"{registry}/{path}:{tag}"


# -- pkg/utils/api/image_test.go: Test_extractImageInfo (standard kinds) --

def entry(registry: str, path: str, tag: str, digest: str, pointer: str) -> dict:
    base = f"{registry}/{path}"
    return {"registry": registry, "name": path.rsplit("/", 1)[-1], "path": path, "tag": tag, "digest": digest,
            "reference": f"{base}@{digest}" if digest else f"{base}:{tag}",
            "referenceWithTag": f"{base}:{tag}", "jsonPointer": pointer}


DIGEST_E = "sha256:" + "e" * 64
DIGEST_F = "sha256:" + FF64
REGISTRY_X = "fictional.registry.example:10443"

EXTRACT = [
    pytest.param(
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "myapp"},
         "spec": {"initContainers": [{"name": "init", "image": "index.docker.io/busybox:v1.2.3"}],
                  "containers": [{"name": "nginx", "image": "nginx:latest"}],
                  "ephemeralContainers": [{"name": "ephemeral", "image": "test/nginx:latest"}]}},
        {"initContainers": {"init": entry("index.docker.io", "busybox", "v1.2.3", "", "/spec/initContainers/0/image")},
         "containers": {"nginx": entry("docker.io", "nginx", "latest", "", "/spec/containers/0/image")},
         "ephemeralContainers": {"ephemeral": entry("docker.io", "test/nginx", "latest", "",
                                                    "/spec/ephemeralContainers/0/image")}},
        id="pod-init-containers-ephemeral"),
    pytest.param(
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "myapp"},
         "spec": {"containers": [{"name": "nginx", "image": "test/nginx:latest"}]}},
        {"containers": {"nginx": entry("docker.io", "test/nginx", "latest", "", "/spec/containers/0/image")}},
        id="pod-containers-only"),
    pytest.param(
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "myapp"},
         "spec": {"selector": {"matchLabels": {"app": "myapp"}}, "template": {
             "metadata": {"labels": {"app": "myapp"}},
             "spec": {"initContainers": [{"name": "init", "image": f"{REGISTRY_X}/imagename:tag@{DIGEST_F}"}],
                      "containers": [{"name": "myapp", "image": f"{REGISTRY_X}/imagename"}],
                      "ephemeralContainers": [{"name": "ephemeral", "image": f"{REGISTRY_X}/imagename:tag@{DIGEST_E}"}]}}}},
        {"initContainers": {"init": entry(REGISTRY_X, "imagename", "tag", DIGEST_F,
                                          "/spec/template/spec/initContainers/0/image")},
         "containers": {"myapp": entry(REGISTRY_X, "imagename", "latest", "", "/spec/template/spec/containers/0/image")},
         "ephemeralContainers": {"ephemeral": entry(REGISTRY_X, "imagename", "tag", DIGEST_E,
                                                    "/spec/template/spec/ephemeralContainers/0/image")}},
        id="deployment-tag-and-digest"),
    pytest.param(
        {"apiVersion": "batch/v1beta1", "kind": "CronJob", "metadata": {"name": "hello"},
         "spec": {"schedule": "*/1 * * * *", "jobTemplate": {"spec": {"template": {"spec": {
             "containers": [{"name": "hello", "image": "test.example.com/test/my-app:v2"}]}}}}}},
        {"containers": {"hello": entry("test.example.com", "test/my-app", "v2", "",
                                       "/spec/jobTemplate/spec/template/spec/containers/0/image")}},
        id="cronjob"),
]


def comparable(images: dict | None) -> dict | None:
    """The images variable with Kyverno's omitted empty fields filled in as empty strings."""
    if images is None:
        return None
    keys = ("registry", "name", "path", "tag", "digest", "reference", "referenceWithTag", "jsonPointer")
    return {group: {name: {k: info.get(k, "") for k in keys} for name, info in entries.items()}
            for group, entries in images.items()}


@pytest.mark.parametrize(("resource", "expected"), EXTRACT)
def test_extract_image_info(resource: dict, expected: dict) -> None:
    assert comparable(compute_images(resource)) == expected


CONTROLLER_KINDS = ["Deployment", "DaemonSet", "StatefulSet", "ReplicaSet", "ReplicationController", "Job"]


@pytest.mark.parametrize("kind", CONTROLLER_KINDS)
def test_pod_controllers_read_the_template(kind: str) -> None:
    resource = {"kind": kind, "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}},
                                       "containers": [{"name": "ignored", "image": "nginx"}]}}
    assert comparable(compute_images(resource)) == {
        "containers": {"c": entry("docker.io", "busybox", "latest", "", "/spec/template/spec/containers/0/image")}}


@pytest.mark.parametrize("kind", ["ConfigMap", "Service", "PodTemplate", "Task", "ClusterTask", ""])
def test_other_kinds_have_no_images(kind: str) -> None:
    resource = {"kind": kind, "spec": {"containers": [{"name": "c", "image": "nginx"}],
                                       "template": {"spec": {"containers": [{"name": "c", "image": "nginx"}]}},
                                       "steps": [{"name": "s", "image": "ubuntu"}]}}
    assert compute_images(resource) is None


def test_containers_without_image_are_left_out() -> None:
    resource = {"kind": "Pod", "spec": {"containers": [
        {"name": "none"}, {"name": "blank", "image": "   "}, {"name": "empty", "image": ""},
        {"name": "number", "image": 5}, {"name": "ok", "image": "nginx"}]}}
    assert comparable(compute_images(resource)) == {
        "containers": {"ok": entry("docker.io", "nginx", "latest", "", "/spec/containers/4/image")}}


def test_groups_without_images_are_absent() -> None:
    assert compute_images({"kind": "Pod", "spec": {"containers": [{"name": "c"}], "initContainers": []}}) == {}
    assert compute_images({"kind": "Deployment", "spec": {}}) == {}


def test_same_container_name_keeps_the_last() -> None:
    resource = {"kind": "Pod", "spec": {"containers": [{"name": "c", "image": "a"}, {"name": "c", "image": "b"}]}}
    assert comparable(compute_images(resource))["containers"]["c"]["path"] == "b"


def test_unparsable_image_fails_the_whole_variable() -> None:
    resource = {"kind": "Pod", "spec": {"containers": [{"name": "ok", "image": "nginx"}],
                                        "initContainers": [{"name": "bad", "image": "Nginx:1"}]}}
    with pytest.raises(ImageReferenceError, match="repository name must be lowercase"):
        compute_images(resource)


# -- Kyverno's JSON form of ImageInfo (registry/tag/digest are `omitempty`) and extract() errors --


def test_empty_tag_and_digest_are_omitted() -> None:
    resource = {"kind": "Pod", "spec": {"containers": [{"name": "d", "image": "nginx@" + DIGEST_F},
                                                       {"name": "t", "image": "nginx:1"}]}}
    images = compute_images(resource)["containers"]
    assert "tag" not in images["d"] and images["d"]["digest"] == DIGEST_F
    assert "digest" not in images["t"] and images["t"]["tag"] == "1"


@pytest.mark.parametrize(("spec", "message"), [
    pytest.param({"containers": [{"image": "nginx"}]}, "invalid key", id="container-without-name"),
    pytest.param({"containers": [{"name": 1, "image": "nginx"}]}, "invalid key", id="container-name-not-string"),
    pytest.param({"containers": [{"image": None}]}, "invalid key", id="nameless-container-without-image"),
    pytest.param({"containers": ["nginx"]}, "invalid image config", id="container-not-an-object"),
    pytest.param({"containers": "nginx"}, "invalid type", id="containers-not-a-list"),
    pytest.param({"containers": [{"name": "c", "image": "Nginx"}]},
                 "invalid image 'Nginx' (bad image: docker.io/Nginx, ", id="unparsable-image-named"),
])
def test_malformed_containers_fail_the_whole_variable(spec: dict, message: str) -> None:
    with pytest.raises(ImageReferenceError) as raised:
        compute_images({"kind": "Pod", "spec": spec})
    assert str(raised.value).startswith(message)


def test_spec_that_is_not_a_map_fails_the_whole_variable() -> None:
    with pytest.raises(ImageReferenceError, match="invalid image config"):
        compute_images({"kind": "Deployment", "spec": {"template": "x"}})


def test_container_map_is_walked_by_key_and_null_members_are_skipped() -> None:
    resource = {"kind": "Pod", "spec": {"containers": {"first": {"name": "c", "image": "nginx"}},
                                        "initContainers": [None]}}
    assert compute_images(resource) == {"containers": {"c": {
        "registry": "docker.io", "path": "nginx", "name": "nginx", "tag": "latest",
        "reference": "docker.io/nginx:latest", "referenceWithTag": "docker.io/nginx:latest",
        "jsonPointer": "/spec/containers/first/image"}}}
