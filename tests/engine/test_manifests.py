"""validate.manifests: signed-manifest verification (spec 19), with the vectors of 19.12-19.14.

The fixed vectors use the spec's keys, messages and signatures (made by other signers);
the rest sign with keys generated here, so every row runs real verification.
"""

from __future__ import annotations

import base64
import copy
import gzip
import io
import tarfile
from collections.abc import Callable
from typing import Any

import pytest
import yaml
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

from scanner.engine.manifests.diff import compare, diff_json
from scanner.engine.manifests.ignore import ResourceIdentity, selector_value_matches
from scanner.engine.manifests.signature import decode_go_base64
from scanner.engine.manifests.spec import expand_public_keys
from scanner.engine.manifests.verify import (
    ManifestsResult,
    compile_manifests_rule,
    evaluate_manifests,
    validate_manifests_spec,
)
from scanner.engine.normalize import normalize_resource
from scanner.engine.types import RuleStatus
from scanner.errors import PolicyError
from scanner.yamldoc import load_documents

from .conftest import y

PASS, FAIL, ERROR = RuleStatus.PASS, RuleStatus.FAIL, RuleStatus.ERROR
D = "cosign.sigstore.dev"

# ---------------------------------------------------------------- spec 19.12-19.14 data
ALICE = """-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAErWp9ndHow8JktA6VeCOrRB+jJ3dG
FaE8FJ3USCnkPHi/ZnLbMymRMSHJ692SFLnmiClKTJbST1jivvxBmOmvPw==
-----END PUBLIC KEY-----"""
BOB = """-----BEGIN PUBLIC KEY-----
MCowBQYDK2VwAyEArefmjUdU7xlqznEIwdLbMl+mQeOCeIvQ3idYcftc9eY=
-----END PUBLIC KEY-----"""
CAROL = """-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEIb+aSwCsFslODI9OQulBxWfz6Man
idhNYbWzh+MI83GwiMUBJpZsCZEasavgAbXov+A0QH8USZom8AEtu3rcww==
-----END PUBLIC KEY-----"""
DAVE = """-----BEGIN PUBLIC KEY-----
MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAtN4qUT7ZjXmqGD5yS9Be
lM+vtOx7wLfsSc3iWemVA39uV0SJJkVx7HgDiEcUzUErnHu3k8RlfKEfmHPq+guA
6zR7lYgh09PscZYxaWJAgtYax5EML0NEtWh9cEw7kQhdTr/d8AtASllVyuhmpYBy
A+3RHdAjCUELjUQC6wZ5T1JcoTTjYzffASVyM72763SeyWDPS/G/KqHrrRsJX/HX
+JqKMGAads+uz1Jcr0+bXOsaPI3az1Z5xo6YExjSApSmngPi1ln0rpdX2XcIPPPS
FZM7en5x2F8+QJvBYK1uKj0mFGiVj3YJRgYKog6XYYret6SMipvJ519M9q/DUgDu
BQIDAQAB
-----END PUBLIC KEY-----"""
SEED_KEY = """-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEStoX3dPCFYFD2uPgTjZOf1I5UFTa
1tIu7uoGoyTxJqqEq7K2aqU+vy+aK76uQ5mcllc+TymVtcLk10kcKvb3FQ==
-----END PUBLIC KEY-----"""

DEPLOY_MESSAGE = (
    "H4sIAAAAAAAAA1WPPQ7CMAyF95zCFwDULkiZGZnZ3dQqFokTJRaU25OoBVpP/vveszHxjXLhKBYwpXJ6dubBMlq4UPLx"
    "HUjUBFIcUdEaAI8D+dIyaICFFw21EAy05CWRa+NceXZYLPS1KuTJacwLGFDd/bpR2mkpheRRad3dmLfwO2wHVpvVvIWL"
    "oshSv/t2DsABp3qnTCyz7Y79+Sfzf+AD1aNSbhMBAAA=")
DEPLOY_SIGNATURE = ("MEUCIFOEnsHe/JuD03p3JzijbY1eE3sC1nU5TrPGBcDIFLtIAiEA+uEwawqurNSQhF5auSCw7Osq0FcE"
                    "PmZY24L+iQFKBT0=")
CM_MESSAGE = ("H4sIAAAAAAAAA0ssyAxLLSrOzM+zUigz5EpJLEm04lJQyM1PSbVSKC4pykwu4crOzEuxUnDOz0vLTPdNLODKT"
              "S1JhCnMS8wFKkwsKNBNBstzAQCdZEwUUQAAAA==")
SIG_ALICE = ("MEUCIQDNKd3147esx3AadQoOo2lXGcFj8FSqMGO+jKZrG5DjkwIgHWagXeBBrYTKyN0xUuj8YaSj3FHFTzB+2"
             "8/4JKsvT1A=")
SIG_BOB = "hEkIegEN1lrE97KSsqBmeErVpxHgyCP/fHSDS4RQG4VeCQZdyhXOOXxEaLJAC+t0z7q85ONMimsixfXZpFIgAw=="
SIG_DAVE = (
    "JPmXLBS199zGt/DwTy7lso5tapa0+2u3UW7Jws70CeFZMfeiE0cUHKS1lM47avkX+wXfBK3JtkgtMjxj+8Sj0KPQktoB"
    "PhC3c2i7WJO2MADRxKvuWU+jh7qOu0WNPMJ5NOemOvSZJmouJouWg5QAFkyXY72/SlisCkHykZqjjbUw72/oLVboJx27"
    "IWe4ZfrCOLWAALfBMxGrlY4zSD5m2FAue6vQPgQmtLye0fzEeFDWuf2Oh9bEfiamlYYaXMNCtuGXzw3FfDI+P0wtHS9c"
    "89JBZZlMQTD2buofqvIlYteJbKogFKLaYk1Wm1K6JHHqfrwq1+X4wSJ70j6Qh9yrtA==")
SIG_DAVE_PSS = (
    "qn2MW/UH1VNNNYJPN0m02K+PHGmubMwgmwZc75HU+HvYRnD4+U9Wgu2agxPEFlM+ppct6sLw0Nx7bRJq3VcYzSPlXjEA"
    "EuP+ITc9sZLlR+A37h5ur0H73GDxqaXFprdLlR/qYAXqmnIKu57e5En4wxTtjlijqDDVOX0ExBf/hvlLYmfXgiHd37mO"
    "8sJNgayFTGa+MWECPa80qCZ3gXMhOrHiobfyNTUGYeMprl9X43oId6IVPbZvRim047Tv+rF4tR4KQiszVNgxuG3Wpmt9"
    "efjOl5YoJjXoENLooDiHCrEoscgmNm5wxotG1iCmoHGxdahGxRQBWa7MYdAoPgtE3w==")
LEGACY_MESSAGE = (
    "H4sIAAAAAAACA5Pv5mAAASbmt5c28jUZiLQ+PFfb9ZtJK/Twhas3r/5l08psSVow68M3oR6+c8eO/o8+d/akZP5yzXmH"
    "Z5jnZmyZdW1y2dqfm5LC3n33Pme3ueD2299xVc9PxWYuMbAvkN7Mp/TM/6XpvEMGx+wqd1pHZ4fluxbxNE9flp9d3bnyW"
    "9GLy5Zm7ntv6aXUnp1UdvD059Kwq0Yb2RiQwQdm/ugXM5YxaDAwAACLE8hHqwAAAA==")
LEGACY_SIGNATURE = ("MEYCIQDRtpFPp55OvShRf+oE6u4Ge72ivOqm7ofwVTIyZ0EpCAIhAP83BeYzDUQUM4Xt5wC0NWoZwlO0"
                    "4+l3v342QfN+ZXUG")
SEED_MESSAGE = ("H4sIAAAAAAAA/zTMPQrCQBBA4X5OMVeIWA2kU7sYVFC0kXEzyJr9c3cirKcXlXSv+R4ne5RcbAyErwYGViZA5GSvG"
                "kcJhN1qXbv3rtk+zLI/bex5sXeXe9vCaMNAeBCTRcGL8owd38SVbyG6aFh/d5lyTAKIgb0Q+lr+UmsSwj7xcxL4"
                "BAAA//+dVuynjwAAAA==")
SEED_SIGNATURE = ("MEQCIDfRq08y5MSOFo3iiEQUKdRJw9YhQHTjMAXwgO0eWO+hAiBYbR5qpa3wBjfN+d4rdQy5iNFf2pEp24aH"
                  "ZJgwyHEaSA==")

# ---------------------------------------------------------------- messages
S1 = ("verified manifest signatures; manifest verification succeeded; verifiedCount 1; "
      "requiredCount 1; message singed by a valid signer: ")
E = "error occurred during manifest verification: "
ASN1 = "invalid signature when validating ASN.1 encoded signature"
P1363 = "invalid signature when validating IEEE_P1363 encoded signature"
RSA_ERR = "crypto/rsa: verification error"
ED_ERR = "failed to verify signature"
JUDGE = "failed to verify signature: failed to judge signature type from public key configuration"
NOT_FOUND = "YAML manifest not found for this resource: "
OFFLINE_SET = ("not supported offline: the signature set carries a Rekor bundle or certificate "
               "(transparency-log verification needs network access)")
KEYLESS_OFFLINE = "failed to verify signature: not supported offline: keyless verification needs Fulcio and Rekor"


def trial(j: int, n: int, why: str) -> str:
    return f"[publickey 1/1] [signature {j}/{n}] error: cosign.VerifyBlobCmd.Exec() returned an error: {why}"


def trials_error(path: str, *whys: str) -> str:
    items = ",".join(f'"{trial(j, len(whys), w)}"' for j, w in enumerate(whys, 1))
    return f"{path}: failed to verify signature: verification failed for {len(whys)} signature. all trials: [{items}]"


def failed(*reasons: str, verified: int = 0, required: int = 1) -> str:
    return (f"manifest verification failed; verifiedCount {verified}; requiredCount {required}; "
            f"message {','.join(reasons)}")


def diff_found(path: str, diff: str) -> str:
    return f"{path}: failed to verify signature. diff found; {diff}"


def item(key: str, after: str, before: str) -> str:
    return f'{{"key":"{key}","values":{{"after":{after},"before":{before}}}}}'


def items(*parts: str) -> str:
    return '{"items":[' + ",".join(parts) + "]}"


K0 = ".attestors[0].entries[0].keys"
K1 = ".attestors[0].entries[1].keys"

# ---------------------------------------------------------------- signing helpers
Signer = Callable[[bytes], bytes]


def _pem(private: Any) -> str:
    return private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode().strip()


def ecdsa_signer(private: ec.EllipticCurvePrivateKey) -> Signer:
    return lambda blob: private.sign(blob, ec.ECDSA(hashes.SHA256()))


def p1363_signer(private: ec.EllipticCurvePrivateKey) -> Signer:
    def sign(blob: bytes) -> bytes:
        r, s = decode_dss_signature(private.sign(blob, ec.ECDSA(hashes.SHA256())))
        size = (private.curve.key_size + 7) // 8
        return r.to_bytes(size, "big") + s.to_bytes(size, "big")
    return sign


KEY_A = ec.generate_private_key(ec.SECP256R1())
KEY_B = ec.generate_private_key(ec.SECP256R1())
KEY_P384 = ec.generate_private_key(ec.SECP384R1())
KEY_P521 = ec.generate_private_key(ec.SECP521R1())
KEY_K1 = ec.generate_private_key(ec.SECP256K1())
KEY_RSA = rsa.generate_private_key(public_exponent=65537, key_size=2048)
KEY_ED = ed25519.Ed25519PrivateKey.generate()
PEM_A, PEM_B = _pem(KEY_A), _pem(KEY_B)
SIGN_A, SIGN_B = ecdsa_signer(KEY_A), ecdsa_signer(KEY_B)
SIGN_RSA: Signer = lambda blob: KEY_RSA.sign(blob, padding.PKCS1v15(), hashes.SHA256())  # noqa: E731
SIGN_RSA_PSS: Signer = lambda blob: KEY_RSA.sign(  # noqa: E731
    blob, padding.PSS(padding.MGF1(hashes.SHA256()), padding.PSS.MAX_LENGTH), hashes.SHA256())
SIGN_ED: Signer = KEY_ED.sign


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def message_of(blob: bytes) -> str:
    return b64(gzip.compress(blob))


def blob_of(*docs: dict) -> bytes:
    """What the signer writes: sorted keys, one document per resource, ``---`` between."""
    return "---\n".join(yaml.safe_dump(d, sort_keys=True, default_flow_style=False) for d in docs).encode()


def tarball(files: dict[str, bytes], links: tuple[str, ...] = ()) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for name in links:
            info = tarfile.TarInfo(name)
            info.type = tarfile.SYMTYPE
            info.linkname = "elsewhere.yaml"
            tar.addfile(info)
    return buffer.getvalue()


def signed(doc: dict, *signers: Signer | str | None, blob: bytes | None = None, domain: str = D,
           message: str | None = None, extra: dict[str, str] | None = None) -> dict:
    """``doc`` with the message and one signature set per signer (``None`` leaves a gap;
    a string is used as the annotation value as it is)."""
    blob = blob_of(doc) if blob is None else blob
    annotations = {f"{domain}/message": message_of(blob) if message is None else message}
    for i, signer in enumerate(signers):
        if signer is None:
            continue
        value = signer if isinstance(signer, str) else b64(signer(blob))
        annotations[f"{domain}/signature{'' if i == 0 else f'_{i}'}"] = value
    annotations.update(extra or {})
    out = copy.deepcopy(doc)
    out.setdefault("metadata", {}).setdefault("annotations", {}).update(annotations)
    return out


# ---------------------------------------------------------------- policy helpers
def keys(*pems: str, count: int | None = None) -> dict:
    attestor_set: dict[str, Any] = {"entries": [{"keys": {"publicKeys": p}} for p in pems]}
    if count is not None:
        attestor_set["count"] = count
    return attestor_set


def manifests(*sets: dict, **extra: Any) -> dict:
    return {"attestors": list(sets), **extra}


def loader(text: str) -> list[Any]:
    return [d.data for d in load_documents(text)]


def run(spec: dict, resource: dict, operation: str = "CREATE") -> ManifestsResult:
    assert validate_manifests_spec(spec) == []
    compiled = compile_manifests_rule(spec)
    return evaluate_manifests(compiled, normalize_resource(copy.deepcopy(resource)),
                              rule_name="check", operation=operation, load_documents=loader)


def edit(resource: dict, path: str | tuple[str, ...], value: Any) -> dict:
    """A copy with ``value`` at the dotted ``path`` (``None`` deletes; list indexes allowed)."""
    out = copy.deepcopy(resource)
    *parents, last = path.split(".") if isinstance(path, str) else path
    node: Any = out
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node.setdefault(part, {})
    if value is None:
        del node[last]
    elif isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return out


# ---------------------------------------------------------------- upstream-confirmed (U1-U9)
SEED_SECRET = y(f"""
apiVersion: v1
data:
  api_token: MDEyMzQ1Njc4OWFiY2RlZg==
kind: Secret
metadata:
  annotations:
    cosign.sigstore.dev/message: {SEED_MESSAGE}
    cosign.sigstore.dev/signature: {SEED_SIGNATURE}
  labels:
    location: europe
  name: mysecret
type: Opaque
""")
SEED_POLICY = manifests(keys(SEED_KEY, count=1))

SERVICE = y("""
apiVersion: v1
kind: Service
metadata:
  name: test-service
spec:
  ports:
  - port: 80
    protocol: TCP
    targetPort: 8080
  selector:
    app: web
""")
SERVICE_A_B = signed(SERVICE, SIGN_A, SIGN_B)
LEGACY_SERVICE_FILES = {"manifest/test-service2.yaml": blob_of(edit(SERVICE, "metadata.name", "test-service2"))}
LEGACY_SERVICE_BLOB = tarball(LEGACY_SERVICE_FILES)
LEGACY_SERVICE = signed(edit(SERVICE, "metadata.name", "test-service2"), SIGN_B, blob=LEGACY_SERVICE_BLOB)
CONFIGMAP = y("""
apiVersion: v1
kind: ConfigMap
metadata:
  name: test-cm
  namespace: default
data:
  key1: val1
  key2: val2
""")
IN_CLUSTER_CONFIGMAP = edit(edit(edit(signed(CONFIGMAP, SIGN_A), "metadata.uid", "0a3c-11"),
                            "metadata.creationTimestamp", "2024-05-01T10:00:00Z"),
                            "metadata.managedFields", [{"manager": "kubectl", "operation": "Update",
                                                        "fieldsV1": {"f:data": {"f:key1": {}}}}])
IN_CLUSTER_SERVICE = copy.deepcopy(signed(SERVICE, SIGN_A))
IN_CLUSTER_SERVICE["metadata"].update({"uid": "42", "resourceVersion": "1234",
                                       "creationTimestamp": "2024-05-01T10:00:00Z"})
IN_CLUSTER_SERVICE["spec"].update({"clusterIP": "10.96.0.12", "clusterIPs": ["10.96.0.12"],
                                   "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack",
                                   "sessionAffinity": "None", "type": "ClusterIP"})
IN_CLUSTER_SERVICE["status"] = {"loadBalancer": {}}
SELECTOR_DIFF = items(item("spec.selector.app", '"db"', '"web"'))

UPSTREAM = [
    pytest.param(SEED_POLICY, SEED_SECRET, PASS, S1, id="u1-seed-secret-as-signed-passes"),
    pytest.param(SEED_POLICY, edit(SEED_SECRET, "metadata.labels.location", "asia"), FAIL,
                 'manifest verification failed; verifiedCount 0; requiredCount 1; message '
                 '.attestors[0].entries[0].keys: failed to verify signature. diff found; '
                 '{"items":[{"key":"metadata.labels.location","values":{"after":"asia","before":"europe"}}]}',
                 id="u2-seed-secret-label-changed-fails-with-the-seed-message"),
    pytest.param(manifests(keys(PEM_A, PEM_B, count=1)), SERVICE, FAIL,
                 failed(f"{K0}: {NOT_FOUND}message not found", f"{K1}: {NOT_FOUND}message not found"),
                 id="u3-unsigned-resource-fails-for-both-keys"),
    pytest.param(manifests(keys(PEM_A, PEM_B, count=1)), LEGACY_SERVICE, PASS, S1,
                 id="u4-legacy-tarball-signed-by-second-key-passes"),
    pytest.param(manifests(keys(PEM_A, PEM_B)), SERVICE_A_B, PASS,
                 "verified manifest signatures; manifest verification succeeded; verifiedCount 2; "
                 "requiredCount 2; message singed by a valid signer: ,singed by a valid signer: ",
                 id="u5-two-signature-sets-two-keys-pass"),
    pytest.param(manifests(keys(PEM_A, PEM_B)), signed(SERVICE, SIGN_A), ERROR,
                 E + trials_error(K1, ASN1), id="u6-second-required-key-without-signature-errors"),
    pytest.param(manifests(keys(PEM_A)), IN_CLUSTER_CONFIGMAP, PASS, S1,
                 id="u7-in-cluster-configmap-fields-are-ignored"),
    pytest.param(manifests(keys(PEM_A)), IN_CLUSTER_SERVICE, PASS, S1,
                 id="u7-in-cluster-service-fields-are-ignored"),
    pytest.param(manifests(keys(PEM_A)), edit(signed(CONFIGMAP, SIGN_A), "data.key3", "val3"), FAIL,
                 failed(diff_found(K0, items(item("data.key3", '"val3"', "null")))),
                 id="u8-extra-data-key-fails-with-diff"),
    pytest.param(manifests(keys(PEM_A, PEM_B)), edit(SERVICE_A_B, "spec.selector.app", "db"), FAIL,
                 failed(diff_found(K0, SELECTOR_DIFF), diff_found(K1, SELECTOR_DIFF), required=2),
                 id="u9-changed-selector-on-two-signature-service-fails"),
    pytest.param(manifests(keys(PEM_A, PEM_B)), signed(SERVICE, SIGN_B), ERROR,
                 E + trials_error(K0, ASN1), id="u9-one-signature-two-required-keys-errors"),
    pytest.param(manifests(keys(PEM_A, PEM_B)), signed(SERVICE, SIGN_B, SIGN_A), PASS,
                 "verified manifest signatures; manifest verification succeeded; verifiedCount 2; "
                 "requiredCount 2; message singed by a valid signer: ,singed by a valid signer: ",
                 id="u9-two-signatures-two-keys-pass"),
]


@pytest.mark.parametrize(("spec", "resource", "status", "message"), UPSTREAM)
def test_manifests_upstream_vectors(spec: dict, resource: dict, status: RuleStatus, message: str) -> None:
    assert run(spec, resource) == ManifestsResult(status, message)


# ---------------------------------------------------------------- worked example 1 (19.12)
DEPLOY = y(f"""
apiVersion: apps/v1
kind: Deployment
metadata:
  annotations:
    cosign.sigstore.dev/message: {DEPLOY_MESSAGE}
    cosign.sigstore.dev/signature: {DEPLOY_SIGNATURE}
  labels:
    app: web
  name: web
spec:
  replicas: 2
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - image: nginx:1.27
        name: web
""")
DEPLOY_POLICY = manifests(keys(ALICE), ignoreFields=[{"objects": [{"kind": "Deployment"}],
                                                      "fields": ["spec.replicas"]}])
DEPLOY_POLICY_PLAIN = manifests(keys(ALICE))
POD = "spec.template.spec"
C0 = f"{POD}.containers.0"


def annotation(name: str) -> tuple[str, ...]:
    return ("metadata", "annotations", name)


def f1(reason: str) -> str:
    return failed(f"{K0}: {reason}")


def d1(*parts: str) -> str:
    return f1("failed to verify signature. diff found; " + items(*parts))


EXAMPLE_1 = [
    pytest.param(DEPLOY_POLICY, DEPLOY, PASS, S1, id="1a-committed-deployment-passes"),
    pytest.param(DEPLOY_POLICY, edit(DEPLOY, "spec.replicas", 5), PASS, S1,
                 id="1b-ignored-replicas-change-passes"),
    pytest.param(DEPLOY_POLICY, edit(DEPLOY, f"{C0}.image", "nginx:1.28"), FAIL,
                 d1(item(f"{C0}.image", '"nginx:1.28"', '"nginx:1.27"')), id="1c-image-change-fails"),
    pytest.param(DEPLOY_POLICY, edit(DEPLOY, f"{C0}.image", "docker.io/nginx:1.27"), PASS, S1,
                 id="1d-docker-io-prefix-is-canonical"),
    pytest.param(DEPLOY_POLICY, edit(DEPLOY, f"{C0}.env", [{"name": "DEBUG", "value": "true"}]), FAIL,
                 d1(item(f"{C0}.env.0.name", '"DEBUG"', "null"), item(f"{C0}.env.0.value", '"true"', "null")),
                 id="1e-added-env-fails"),
    pytest.param(DEPLOY_POLICY, edit(DEPLOY, annotation(f"{D}/signature"), None), FAIL,
                 f1("failed to verify signature: signature not found"), id="1f-removed-signature-fails"),
    pytest.param(DEPLOY_POLICY, edit(DEPLOY, f"{POD}.securityContext", {"runAsUser": 0}), PASS, S1,
                 id="1g-pod-security-context-is-a-deployment-default"),
    pytest.param(DEPLOY_POLICY, edit(DEPLOY, "metadata.labels.status", "hacked"), PASS, S1,
                 id="1h-status-matches-anywhere"),
    pytest.param(DEPLOY_POLICY, edit(DEPLOY, f"{C0}.resources", {"limits": {"cpu": "8"}}), PASS, S1,
                 id="1i-container-resources-are-a-deployment-default"),
    pytest.param(DEPLOY_POLICY, edit(DEPLOY, f"{C0}.securityContext", {"privileged": True}), FAIL,
                 d1(item(f"{C0}.securityContext.privileged", "true", "null")),
                 id="1j-container-security-context-fails"),
    pytest.param(DEPLOY_POLICY, edit(edit(DEPLOY, f"{C0}.image", "nginx:1.28"),
                                     annotation(f"{D}/signature"), SIG_ALICE), ERROR,
                 E + trials_error(K0, ASN1), id="1k-foreign-signature-errors"),
    pytest.param(DEPLOY_POLICY, edit(DEPLOY, "metadata.namespace", "prod"), PASS, S1,
                 id="1l-namespace-is-never-compared"),
    pytest.param(DEPLOY_POLICY, edit(DEPLOY, "spec.replicas", "2"), PASS, S1,
                 id="1m-type-change-on-ignored-path-passes"),
    pytest.param(DEPLOY_POLICY, edit(DEPLOY, "spec.paused", False), FAIL,
                 d1(item("spec.paused", "false", "null")), id="1n-added-false-is-kept"),
    pytest.param(DEPLOY_POLICY, edit(DEPLOY, f"{POD}.hostname", ""), PASS, S1,
                 id="1o-added-empty-string-is-dropped"),
    pytest.param(DEPLOY_POLICY, edit(edit(DEPLOY, f"{POD}.restartPolicy", "Always"),
                                     f"{C0}.imagePullPolicy", "Always"), PASS, S1,
                 id="1p-every-kind-defaults-reach-the-template"),
    pytest.param(DEPLOY_POLICY_PLAIN, edit(DEPLOY, "spec.replicas", 5), FAIL,
                 d1(item("spec.replicas", "5", "2")), id="1q-replicas-without-ignore-fields-fails"),
    pytest.param(DEPLOY_POLICY_PLAIN, edit(DEPLOY, "spec.replicas", "2"), FAIL,
                 d1(item("spec.replicas", '"(type: string) 2"', '"(type: float64) %!s(float64=2)"')),
                 id="1r-replicas-type-change-fails"),
]


@pytest.mark.parametrize(("spec", "resource", "status", "message"), EXAMPLE_1)
def test_manifests_worked_example_one_key(spec: dict, resource: dict, status: RuleStatus,
                                          message: str) -> None:
    assert run(spec, resource) == ManifestsResult(status, message)


# ---------------------------------------------------------------- worked example 2 (19.13)
CM_DOC = y("""
apiVersion: v1
kind: ConfigMap
metadata:
  name: app-config
data:
  mode: strict
""")
CM = signed(CM_DOC, SIG_ALICE, SIG_BOB, message=CM_MESSAGE)
CM_ALICE = signed(CM_DOC, SIG_ALICE, message=CM_MESSAGE)
EXAMPLE_2_POLICY = manifests(keys(CAROL, ALICE, count=1), keys(BOB))
S_SET1 = "manifest verification succeeded; verifiedCount 1; requiredCount 1; message singed by a valid signer: "
ERR_2B = E + trials_error(".attestors[1].entries[0].keys", ED_ERR)

EXAMPLE_2 = [
    pytest.param(CM, PASS, f"verified manifest signatures; {S_SET1},{S_SET1}",
                 id="2a-committed-configmap-passes"),
    pytest.param(CM_ALICE, ERROR, ERR_2B, id="2b-without-bob-signature-errors"),
    pytest.param(signed(CM_DOC, SIG_BOB, message=CM_MESSAGE), ERROR,
                 E + trials_error(K0, P1363) + "; " + trials_error(K1, P1363),
                 id="2c-only-bob-signature-errors-for-both-ecdsa-keys"),
    pytest.param(edit(CM, "data.mode", "lax"), ERROR, E + trials_error(K0, ASN1, P1363),
                 id="2d-errors-dominate-a-diff-failure"),
    pytest.param(signed(CM_DOC, SIG_BOB, SIG_ALICE, message=CM_MESSAGE), PASS,
                 f"verified manifest signatures; {S_SET1},{S_SET1}", id="2e-set-order-does-not-matter"),
    pytest.param(signed(CM_DOC, SIG_ALICE, None, SIG_BOB, message=CM_MESSAGE), ERROR, ERR_2B,
                 id="2f-signature-after-a-gap-is-never-read"),
]


@pytest.mark.parametrize(("resource", "status", "message"), EXAMPLE_2)
def test_manifests_worked_example_two_signers(resource: dict, status: RuleStatus, message: str) -> None:
    assert run(EXAMPLE_2_POLICY, resource) == ManifestsResult(status, message)


# ---------------------------------------------------------------- own vectors (M1-M29)
LEGACY_CM = y(f"""
apiVersion: v1
kind: ConfigMap
metadata:
  name: legacy-config
  annotations:
    cosign.sigstore.dev/message: {LEGACY_MESSAGE}
    cosign.sigstore.dev/signature: {LEGACY_SIGNATURE}
data:
  tier: gold
""")
ALICE_THEN_BOB = ALICE + "\n" + BOB
BOB_THEN_ALICE = BOB + "\n" + ALICE
S2_NESTED = ("manifest verification succeeded; verifiedCount 2; requiredCount 2; message "
             "singed by a valid signer: ,singed by a valid signer: ")
NESTED_POLICY = manifests({"count": 1, "entries": [{"keys": {"publicKeys": CAROL}},
                                                   {"attestor": keys(ALICE, BOB)}]})
LAX_DIFF = items(item("data.mode", '"lax"', '"strict"'))
KEYLESS = {"keyless": {"issuer": "https://token.actions.githubusercontent.com",
                       "subject": "dev@example.com"}}
K8S_KEY = manifests({"entries": [{"keys": {"publicKeys": "k8s://ns/cosign-pub"}}]})
K8S_KEY_ERROR = (E + f"{K0}: failed to verify signature: not supported offline: key reference "
                 "'k8s://ns/cosign-pub' cannot be loaded")
CM_BUNDLE = {f"{D}/bundle": message_of(b'{"SignedEntryTimestamp": "x"}')}

OWN = [
    pytest.param(manifests(keys(DAVE)), signed(CM_DOC, SIG_DAVE, message=CM_MESSAGE), PASS, S1,
                 id="m1-rsa-pkcs1v15-signature-passes"),
    pytest.param(manifests(keys(DAVE)), signed(CM_DOC, SIG_DAVE_PSS, message=CM_MESSAGE), ERROR,
                 E + trials_error(K0, RSA_ERR), id="m2-rsa-pss-signature-errors"),
    pytest.param(manifests(keys(DAVE)), CM_ALICE, ERROR, E + trials_error(K0, RSA_ERR),
                 id="m3-ecdsa-signature-with-rsa-key-errors"),
    pytest.param(manifests(keys(ALICE)), LEGACY_CM, PASS, S1, id="m4-legacy-tarball-passes"),
    pytest.param(manifests(keys(ALICE)), edit(LEGACY_CM, "data.tier", "silver"), FAIL,
                 failed(diff_found(K0, items(item("data.tier", '"silver"', '"gold"')))),
                 id="m5-legacy-tarball-change-fails-with-diff"),
    pytest.param(manifests(keys(ALICE)), edit(CM_ALICE, "kind", "Secret"), FAIL,
                 failed(f"{K0}: {NOT_FOUND}failed to find a YAML manifest in the gzipped message"),
                 id="m6-kind-not-in-message-fails"),
    pytest.param(manifests(keys(ALICE)), edit(CM_ALICE, "metadata.name", "other-config"), FAIL,
                 failed(diff_found(K0, items(item("metadata.name", '"other-config"', '"app-config"')))),
                 id="m7-renamed-resource-fails-with-name-diff"),
    pytest.param(manifests(keys(ALICE_THEN_BOB)), CM, ERROR, E + f"{K1}: {JUDGE}",
                 id="m8-multi-key-string-second-piece-is-unusable"),
    pytest.param(manifests(keys(ALICE_THEN_BOB, count=1)), CM, PASS, S1,
                 id="m9-multi-key-string-with-count-one-passes"),
    pytest.param(manifests(keys(BOB_THEN_ALICE, count=1)), CM_ALICE, ERROR,
                 E + trials_error(K0, ED_ERR) + f"; {K1}: {JUDGE}",
                 id="m10-multi-key-string-cannot-reach-the-second-key"),
    pytest.param(manifests(keys(ALICE), annotationDomain="sig.example.com"),
                 signed(CM_DOC, SIG_ALICE, message=CM_MESSAGE, domain="sig.example.com"), PASS, S1,
                 id="m11-custom-annotation-domain-passes"),
    pytest.param(manifests(keys(ALICE), annotationDomain="sig.example.com"), CM_ALICE, FAIL,
                 failed(f"{K0}: {NOT_FOUND}message not found"),
                 id="m12-default-domain-is-not-read-with-a-custom-domain"),
    pytest.param(NESTED_POLICY, CM, PASS,
                 f"verified manifest signatures; manifest verification succeeded; verifiedCount 1; "
                 f"requiredCount 1; message {S2_NESTED}", id="m13-nested-attestor-set-passes"),
    pytest.param(NESTED_POLICY, CM_ALICE, ERROR,
                 E + trials_error(K0, ASN1) + "; failed to verify signature; .attestors[0].entries[1].attestor: "
                 + trials_error(".attestors[0].entries[1].attestor.entries[1].keys", ED_ERR),
                 id="m14-nested-attestor-error-is-wrapped"),
    pytest.param(manifests(keys(ALICE, BOB, count=1)), edit(CM, "data.mode", "lax"), FAIL,
                 failed(diff_found(K0, LAX_DIFF), diff_found(K1, LAX_DIFF)),
                 id="m15-both-signers-fail-with-the-diff"),
    pytest.param(manifests({"count": 1, "entries": []}), CM, FAIL, failed(),
                 id="m16-empty-entries-fail"),
    pytest.param(manifests(keys(ALICE, BOB, count=3)), CM, FAIL, failed(verified=2, required=3),
                 id="m17-count-above-entries-fails"),
    pytest.param(manifests(keys(ALICE), ignoreFields=[{"fields": ["data.mode"]}]),
                 edit(edit(CM_ALICE, "data.mode", "lax"), "data.extra", "x"), FAIL,
                 failed(diff_found(K0, items(item("data.extra", '"x"', "null")))),
                 id="m18-ignore-fields-without-objects-apply-to-every-resource"),
    pytest.param(manifests({"entries": [{"keys": {"publicKeys": ALICE}, "annotations": {"team": "a"}}]}),
                 edit(CM_ALICE, annotation("team"), "b"), ERROR,
                 E + "annotations mismatch: b does not match expected value a for key team",
                 id="m19-annotations-mismatch-errors"),
    pytest.param(manifests({"entries": [{"keys": {"publicKeys": ALICE}, "annotations": {"team": "a"}}]}),
                 CM_DOC, ERROR, E + "annotations mismatch:  does not match expected value a for key team",
                 id="m19-missing-annotation-is-the-empty-string"),
    pytest.param(manifests(keys(ALICE)), signed(CM_DOC, SIG_ALICE, message=CM_MESSAGE, extra=CM_BUNDLE),
                 ERROR, E + trials_error(K0, OFFLINE_SET), id="m20-bundle-set-needs-the-transparency-log"),
    pytest.param(manifests(keys(ALICE)),
                 signed(CM_DOC, SIG_ALICE, SIG_ALICE, message=CM_MESSAGE, extra=CM_BUNDLE), PASS, S1,
                 id="m21-plain-second-set-verifies"),
    pytest.param(manifests({"entries": [KEYLESS]}), CM_DOC, FAIL,
                 failed(f".attestors[0].entries[0].keyless: {NOT_FOUND}message not found"),
                 id="m22-keyless-on-unsigned-resource-fails"),
    pytest.param(manifests({"entries": [KEYLESS]}), CM_ALICE, ERROR,
                 E + f".attestors[0].entries[0].keyless: {KEYLESS_OFFLINE}",
                 id="m23-keyless-on-signed-resource-errors"),
    pytest.param(manifests({"count": 1, "entries": [KEYLESS, {"keys": {"publicKeys": ALICE}}]}), CM_ALICE,
                 ERROR, E + f".attestors[0].entries[0].keyless: {KEYLESS_OFFLINE}",
                 id="m24-keyless-subject-leaks-into-the-key-entry"),
    pytest.param(manifests({"count": 1, "entries": [{"keyless": {"subject": "*"}},
                                                    {"keys": {"publicKeys": ALICE}}]}),
                 CM_ALICE, PASS,
                 "verified manifest signatures; manifest verification succeeded; verifiedCount 1; "
                 "requiredCount 1; message singed by a valid signer: ",
                 id="m24-wildcard-subject-does-not-leak"),
    pytest.param(manifests({"count": 1, "entries": [{"keyless": {"subject": "-"}},
                                                    {"keys": {"publicKeys": ALICE}}]}),
                 CM_ALICE, PASS, S1,
                 id="m24-dash-subject-does-not-leak"),
    pytest.param(manifests({"count": 1, "entries": [KEYLESS, {"attestor": keys(ALICE)}]}), CM_ALICE,
                 ERROR, E + f".attestors[0].entries[0].keyless: {KEYLESS_OFFLINE}",
                 id="m24-leak-reaches-nested-sets"),
    pytest.param(manifests({"entries": [KEYLESS]}, keys(ALICE)), CM_ALICE, ERROR,
                 E + f".attestors[0].entries[0].keyless: {KEYLESS_OFFLINE}",
                 id="m24-first-failing-set-decides"),
    pytest.param(K8S_KEY, CM_ALICE, ERROR, K8S_KEY_ERROR, id="m25-key-reference-on-signed-resource-errors"),
    pytest.param(K8S_KEY, CM_DOC, FAIL, failed(f"{K0}: {NOT_FOUND}message not found"),
                 id="m25-key-reference-on-unsigned-resource-fails"),
]


@pytest.mark.parametrize(("spec", "resource", "status", "message"), OWN)
def test_manifests_own_vectors(spec: dict, resource: dict, status: RuleStatus, message: str) -> None:
    assert run(spec, resource) == ManifestsResult(status, message)


@pytest.mark.parametrize("operation", [
    pytest.param("DELETE", id="m26-delete-has-no-result"),
])
def test_manifests_delete_has_no_result(operation: str) -> None:
    assert run(manifests(keys(ALICE)), CM_ALICE, operation) == ManifestsResult(None, "")


@pytest.mark.parametrize("operation", [
    pytest.param("UPDATE", id="update-is-evaluated-like-create"),
    pytest.param("CONNECT", id="connect-is-evaluated-like-create"),
])
def test_manifests_other_operations_are_evaluated(operation: str) -> None:
    assert run(manifests(keys(ALICE)), CM_ALICE, operation) == ManifestsResult(PASS, S1)


@pytest.mark.parametrize("row", [pytest.param(p, id="m29-dry-run-" + p.id) for p in UPSTREAM + OWN[:12]])
def test_manifests_dry_run_has_no_effect_offline(row: Any) -> None:
    spec, resource, status, message = row.values
    with_dry_run = {**spec, "dryRun": {"enable": True, "namespace": "dry"}}
    assert run(with_dry_run, resource) == ManifestsResult(status, message)


# ---------------------------------------------------------------- comparison (C1-C22)
CONTAINER = ("spec", "containers", 0)


def under_container(value: dict) -> dict:
    return {"spec": {"containers": [value]}}


COMPARISONS = [
    pytest.param({"a": {"b": 1}}, {"a": {"b": 2}}, (), items(item("a.b", "2", "1")), id="c1-change"),
    pytest.param({"a": {}}, {"a": {"c": "x"}}, (), items(item("a.c", '"x"', "null")), id="c2-addition"),
    pytest.param({"p": "80"}, {"p": 80.0}, (),
                 items(item("p", '"(type: float64) %!s(float64=80)"', '"(type: string) 80"')),
                 id="c3-type-change"),
    pytest.param(under_container({"ports": [{"containerPort": 80, "name": "http"}]}),
                 under_container({"ports": [{"containerPort": 80}, {"name": "http"}]}), (), items(),
                 id="c4-re-indexed-list-entry-is-dropped"),
    pytest.param({"spec": {}}, {"spec": {"hostname": ""}}, (), items(), id="c5-one-sided-empty-string"),
    pytest.param({"spec": {}}, {"spec": {"paused": False, "n": 0}}, (),
                 items(item("spec.n", "0", "null"), item("spec.paused", "false", "null")),
                 id="c6-one-sided-false-and-zero-are-kept"),
    pytest.param({"spec": {"containers": [{"image": "nginx:1.27"}, {"image": "ubuntu"}]}},
                 {"spec": {"containers": [{"image": "docker.io/nginx:1.27"}, {"image": "ubuntu:latest"}]}},
                 (), items(), id="c7-image-canonicalisation"),
    pytest.param({"x": {"image": "nginx", "sidecarImage": "nginx"}},
                 {"x": {"image": "docker.io/library/nginx", "sidecarImage": "nginx:latest"}}, (),
                 items(item("x.image", '"docker.io/library/nginx"', '"nginx"'),
                       item("x.sidecarImage", '"nginx:latest"', '"nginx"')),
                 id="c8-library-prefix-and-other-suffixes-are-kept"),
    pytest.param({"metadata": {"annotations": {}, "labels": None}, "x": []}, {"metadata": {}}, (), items(),
                 id="c9-empty-and-null-values-vanish"),
    pytest.param({"b": 1, "a": {"z": 1, "B": 1}}, {"b": 2, "a": {"z": 2, "B": 2}}, (),
                 items(item("a.B", "2", "1"), item("a.z", "2", "1"), item("b", "2", "1")),
                 id="c10-items-sorted-by-path-bytes"),
    pytest.param({"metadata": {"labels": {}}}, {"metadata": {"labels": {"status": "x"}}}, ("status",),
                 items(), id="c11-field-matches-anywhere-in-the-path"),
    pytest.param({"spec": {"template": {"spec": {"containers": [{}, {}, {}, {"image": "a"}]}}}},
                 {"spec": {"template": {"spec": {"containers": [{}, {}, {}, {"image": "b"}]}}}},
                 ("spec.containers.*.image",), items(), id="c12-field-matches-in-the-middle"),
    pytest.param({"spec": {}}, {"spec": {"replicasMax": 3}}, ("spec.replicas",), items(),
                 id="c13-field-is-a-prefix"),
    pytest.param(under_container({"image": "a"}), under_container({"image": "b"}),
                 ("spec.containers[0].image",),
                 items(item("spec.containers.0.image", '"b"', '"a"')), id="c14-bracket-index-does-not-match"),
    pytest.param({"a": 1, "b": {"c": "x"}}, {"a": 2, "d": True}, ("",), items(),
                 id="c15-empty-field-ignores-everything"),
    pytest.param({"a": "x"}, {"a": "<b>&"}, (), items(item("a", '"\\u003cb\\u003e\\u0026"', '"x"')),
                 id="c16-html-characters-are-escaped"),
    pytest.param({"a": 0.5, "b": 100, "c": 1e21, "d": 1e-7}, {}, (),
                 items(item("a", "null", "0.5"), item("b", "null", "100"), item("c", "null", "1e+21"),
                       item("d", "null", "1e-7")), id="c17-go-number-text"),
    pytest.param({"a": {"on": True}}, {"a": {"on": "true"}}, (),
                 items(item("a.on", '"(type: string) true"', '"(type: bool) %!s(bool=true)"')),
                 id="c18-bool-and-string-are-different-types"),
    pytest.param(under_container({"args": ["a", "b"]}), under_container({"args": ["b", "a"]}), (),
                 items(item("spec.containers.0.args.0", '"b"', '"a"'),
                       item("spec.containers.0.args.1", '"a"', '"b"')), id="c19-swapped-scalars-are-changes"),
    pytest.param(under_container({"args": ["a", "b"]}), under_container({"args": ["a"]}), (),
                 items(item("spec.containers.0.args.1", "null", '"b"')),
                 id="c20-trailing-index-is-never-re-indexed"),
    pytest.param({"metadata": {"namespace": "prod"}}, {"metadata": {"namespace": "dev"}}, (),
                 items(item("metadata.namespace", '"dev"', '"prod"')), id="c21-namespace-change-is-kept"),
    pytest.param({"metadata": {}}, {"metadata": {"namespace": "dev"}}, (), items(),
                 id="c22-added-namespace-is-dropped"),
    pytest.param({"a": 1}, {"a": True}, (),
                 items(item("a", '"(type: bool) %!s(bool=true)"', '"(type: float64) %!s(float64=1)"')),
                 id="one-and-true-are-different-types"),
    pytest.param({"a": 2}, {"a": 2.0}, (), items(), id="integer-and-float-are-the-same-number"),
    pytest.param(under_container({"env": [{"name": "A", "value": "1"}]}),
                 under_container({"env": [{"name": "A", "value": 1}]}), (),
                 items(item("spec.containers.0.env.0.value", '"(type: float64) %!s(float64=1)"',
                            '"(type: string) 1"')), id="re-index-needs-the-same-typed-value"),
    pytest.param({"a": "x"}, {"a": "y"}, ("a(",), items(item("a", '"y"', '"x"')),
                 id="invalid-field-regex-matches-nothing"),
    pytest.param({"metadata": {"uid": "1"}}, {"metadata": {"uid": "2"}}, ("metadata.uid",), items(),
                 id="dot-in-field-is-a-regex-wildcard"),
]


@pytest.mark.parametrize(("before", "after", "ignore", "expected"), COMPARISONS)
def test_manifests_comparison_reports_remaining_differences(
        before: dict, after: dict, ignore: tuple[str, ...], expected: str) -> None:
    assert diff_json(compare(before, after, ignore)) == expected


@pytest.mark.parametrize(("pattern", "value", "expected"), [
    pytest.param("", "Deployment", True, id="empty-selector-matches-anything"),
    pytest.param(" * ", "Deployment", True, id="star-matches-anything"),
    pytest.param("-", "", True, id="dash-matches-the-empty-value"),
    pytest.param("-", "apps", False, id="dash-rejects-a-value"),
    pytest.param("Deploy*", "Deployment", True, id="trailing-star-is-a-prefix"),
    pytest.param("Deployment,StatefulSet", "StatefulSet", True, id="comma-alternatives"),
    pytest.param("Deployment,Stateful*", "StatefulSet", False, id="trailing-star-is-checked-first"),
    pytest.param("De*ment", "Deployment", False, id="inner-star-is-literal"),
])
def test_manifests_selector_value_matching(pattern: str, value: str, expected: bool) -> None:
    assert selector_value_matches(pattern, value) is expected


def test_manifests_resource_identity_splits_group_and_version() -> None:
    assert ResourceIdentity.of({"apiVersion": "apps/v1", "kind": "Deployment",
                                "metadata": {"name": "a", "namespace": "n"}}) == \
        ResourceIdentity("apps", "v1", "Deployment", "a", "n")
    assert ResourceIdentity.of({"apiVersion": "v1", "kind": "Pod"}) == ResourceIdentity("", "v1", "Pod", "", "")


# ---------------------------------------------------------------- offline gaps and leaks
REPO_ERROR = f"{NOT_FOUND}not supported offline: OCI resource bundle ghcr.io/acme/bundle:v1"
CERTS = {"certificates": {"cert": "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"}}
CERTS_OFFLINE = "failed to verify signature: not supported offline: certificate verification needs the transparency log"
LEAKED_CERTS = ("failed to verify signature: not supported offline: the certificates settings of an "
                "earlier entry apply to this entry")
PGP = "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmQENBF\n-----END PGP PUBLIC KEY BLOCK-----"

OFFLINE = [
    pytest.param(manifests(keys(ALICE), repository="ghcr.io/acme/bundle:v1"), CM_ALICE, ERROR,
                 E + f"{K0}: {REPO_ERROR}", id="rule-repository-errors"),
    pytest.param(manifests({"entries": [{"keys": {"publicKeys": ALICE},
                                         "repository": "ghcr.io/acme/bundle:v1"}]}), CM_DOC, ERROR,
                 E + f"{K0}: {REPO_ERROR}", id="entry-repository-errors-before-the-message-check"),
    pytest.param(manifests(keys(ALICE)), edit(CM_ALICE, annotation(f"{D}/resourceBundleRef"),
                                              "ghcr.io/acme/bundle:v1"), ERROR,
                 E + f"{K0}: {REPO_ERROR}", id="resource-bundle-ref-annotation-errors"),
    pytest.param(manifests({"count": 1, "entries": [
        {"keys": {"publicKeys": CAROL}, "repository": "ghcr.io/acme/bundle:v1"},
        {"keys": {"publicKeys": ALICE}}]}), CM_ALICE, ERROR,
        E + f"{K0}: {REPO_ERROR}; {K1}: {REPO_ERROR}", id="entry-repository-leaks-into-later-entries"),
    pytest.param(manifests({"count": 1, "entries": [CERTS, {"keys": {"publicKeys": ALICE}}]}), CM_ALICE,
                 ERROR, E + f".attestors[0].entries[0].certificates: {CERTS_OFFLINE}; {K1}: {LEAKED_CERTS}",
                 id="certificates-leak-into-later-key-entries"),
    pytest.param(manifests({"count": 1, "entries": [{"keys": {"publicKeys": ALICE}}, CERTS]}), CM_ALICE,
                 PASS, S1, id="entries-after-the-count-is-reached-are-not-evaluated"),
    pytest.param(manifests({"entries": [{"keys": {"publicKeys": PGP}}]}), CM_ALICE, ERROR,
                 E + f"{K0}: failed to verify signature: not supported: PGP keys", id="pgp-key-errors"),
    pytest.param(manifests({"entries": [{"keys": {"kms": "awskms:///alias/x"}}]}), CM_ALICE, ERROR,
                 E + f"{K0}: {JUDGE}", id="kms-only-key-errors"),
    pytest.param(manifests({"entries": [{"keys": {"publicKeys": "{{ request.object.key }}"}}]}), CM_ALICE,
                 ERROR, E + f"{K0}: failed to verify signature: not supported offline: key reference "
                 "'{{ request.object.key }}' cannot be loaded", id="variables-are-not-substituted-in-keys"),
    pytest.param(manifests({"entries": [{"annotations": {}}]}), CM_ALICE, ERROR,
                 E + ".attestors[0].entries[0]: failed to verify signature: not supported: the attestor "
                 "entry has no keys, certificates, keyless or attestor", id="entry-without-verifier-errors"),
    pytest.param(manifests({"entries": [{"attestor": {"entries": "x"}}]}), CM_ALICE, ERROR,
                 E + "failed to unmarshal nested attestor .attestors[0].entries[0]: json: /entries must be a list",
                 id="malformed-nested-attestor-errors"),
]


@pytest.mark.parametrize(("spec", "resource", "status", "message"), OFFLINE)
def test_manifests_offline_gaps_are_errors(spec: dict, resource: dict, status: RuleStatus,
                                           message: str) -> None:
    assert run(spec, resource) == ManifestsResult(status, message)


# ---------------------------------------------------------------- key types and encodings
APP = y("""
apiVersion: apps/v1
kind: Deployment
metadata: {name: app}
spec:
  replicas: 1
  template:
    spec:
      containers: [{name: app, image: "registry.example.com/app:1.0"}]
""")


def _der_with_trailing_byte(blob: bytes) -> bytes:
    return SIGN_A(blob) + b"\x00"


KEY_TYPES = [
    pytest.param(_pem(KEY_P384), ecdsa_signer(KEY_P384), PASS, "", id="ecdsa-p384-passes"),
    pytest.param(_pem(KEY_P521), ecdsa_signer(KEY_P521), PASS, "", id="ecdsa-p521-passes"),
    pytest.param(PEM_A, p1363_signer(KEY_A), PASS, "", id="ecdsa-p1363-signature-passes"),
    pytest.param(_pem(KEY_RSA), SIGN_RSA, PASS, "", id="rsa-pkcs1v15-passes"),
    pytest.param(_pem(KEY_RSA), SIGN_RSA_PSS, ERROR, trials_error(K0, RSA_ERR), id="rsa-pss-errors"),
    pytest.param(_pem(KEY_ED), SIGN_ED, PASS, "", id="ed25519-passes"),
    pytest.param(_pem(KEY_ED), SIGN_A, ERROR, trials_error(K0, ED_ERR), id="ed25519-with-ecdsa-signature-errors"),
    pytest.param(_pem(KEY_K1), ecdsa_signer(KEY_K1), ERROR, f"{K0}: {JUDGE}", id="secp256k1-key-is-unusable"),
    pytest.param(PEM_A, _der_with_trailing_byte, ERROR, trials_error(K0, ASN1),
                 id="der-with-trailing-data-is-not-strict"),
    pytest.param(PEM_A, lambda blob: b"\x01\x02\x03", ERROR,
                 trials_error(K0, "ecdsa: Invalid IEEE_P1363 encoded bytes"), id="odd-p1363-length-errors"),
    pytest.param(PEM_A, "not base64!", ERROR,
                 trials_error(K0, "ecdsa: Invalid IEEE_P1363 encoded bytes"), id="undecodable-signature-is-raw-text"),
    pytest.param(PEM_B, SIGN_A, ERROR, trials_error(K0, ASN1), id="other-ecdsa-key-errors"),
    pytest.param("-----BEGIN PUBLIC KEY-----\nnot a key\n-----END PUBLIC KEY-----", SIGN_A, ERROR,
                 f"{K0}: {JUDGE}", id="garbage-pem-is-unusable"),
    pytest.param(" " + PEM_A, SIGN_A, ERROR, f"{K0}: {JUDGE}", id="leading-whitespace-is-not-inline"),
    pytest.param(PEM_A + "\ntrailing text", SIGN_A, PASS, "", id="text-after-the-pem-block-is-ignored"),
]


@pytest.mark.parametrize(("pem", "signer", "status", "error"), KEY_TYPES)
def test_manifests_key_types_and_signature_encodings(pem: str, signer: Signer | str, status: RuleStatus,
                                                     error: str) -> None:
    result = run(manifests(keys(pem)), signed(APP, signer))
    assert result == ManifestsResult(status, S1 if status is PASS else E + error)


def test_manifests_rsa_keys_below_1024_bits_are_unusable() -> None:
    small = rsa.RSAPublicNumbers(65537, (1 << 511) + 0x1235).public_key()  # 512-bit modulus
    pem = small.public_bytes(serialization.Encoding.PEM,
                             serialization.PublicFormat.SubjectPublicKeyInfo).decode().strip()
    resource = signed(APP, SIGN_RSA)
    assert run(manifests(keys(pem)), resource) == ManifestsResult(ERROR, E + f"{K0}: {JUDGE}")


@pytest.mark.parametrize(("text", "pieces"), [
    pytest.param(ALICE, [ALICE], id="single-key-is-kept"),
    pytest.param(ALICE_THEN_BOB + "\n", [ALICE, "\n" + BOB], id="second-piece-keeps-the-line-break"),
    pytest.param(ALICE + BOB + "tail", [ALICE, BOB], id="text-after-the-last-marker-is-dropped"),
])
def test_manifests_public_keys_expansion(text: str, pieces: list[str]) -> None:
    assert expand_public_keys(text) == pieces


@pytest.mark.parametrize(("text", "expected"), [
    pytest.param("aGVsbG8=", b"hello", id="padded"),
    pytest.param("aGVs\r\nbG8=", b"hello", id="line-breaks-are-ignored"),
    pytest.param("aGVs bG8=", "illegal base64 data at input byte 4", id="space-is-illegal"),
    pytest.param("aGVsbG8", "illegal base64 data at input byte 7", id="missing-padding"),
    pytest.param("aGVsbG8-", "illegal base64 data at input byte 7", id="url-alphabet-is-illegal"),
])
def test_manifests_go_base64_decoding(text: str, expected: bytes | str) -> None:
    if isinstance(expected, bytes):
        assert decode_go_base64(text) == expected
    else:
        with pytest.raises(ValueError, match=f"^{expected}$"):
            decode_go_base64(text)


# ---------------------------------------------------------------- message payload and candidates
def _sign_raw(doc: dict, blob: bytes, message: str) -> dict:
    return signed(doc, SIGN_A, blob=blob, message=message)


APP_BLOB = blob_of(APP)
APP_DB = edit(edit(APP, "metadata.name", "db"), C0.replace(POD, "spec.template.spec") + ".image", "postgres:16")
SECOND_APP = edit(APP, "metadata.namespace", "prod")
MULTI_BLOB = blob_of(CONFIGMAP, APP, APP_DB)
READ_ERROR = f"{NOT_FOUND}failed to read YAMLs in the gzipped message: "

MESSAGES = [
    pytest.param(APP, signed(APP, SIGN_A, blob=APP_BLOB, message=b64(APP_BLOB)), PASS, S1,
                 id="uncompressed-message-verifies"),
    pytest.param(APP, signed(APP, SIGN_A, message="not*base64"), ERROR,
                 E + f"{K0}: {NOT_FOUND}failed to decode base64 message in the annotation: "
                 "illegal base64 data at input byte 3", id="undecodable-message-errors"),
    pytest.param(APP, _sign_raw(APP, b"a: [unclosed", message_of(b"a: [unclosed")), ERROR,
                 E + f"{K0}: {READ_ERROR}gzip: invalid header", id="unparseable-yaml-errors"),
    pytest.param(APP, signed(APP, SIGN_A, message=""), ERROR, E + f"{K0}: {READ_ERROR}gzip: invalid header",
                 id="empty-message-is-present-and-unreadable"),
    pytest.param(APP, _sign_raw(APP, b"just text", message_of(b"just text")), FAIL,
                 failed(f"{K0}: {NOT_FOUND}failed to find a YAML manifest in the gzipped message"),
                 id="scalar-document-has-no-kind"),
    pytest.param(APP, _sign_raw(APP, tarball({"x/app.yaml": APP_BLOB}, links=("x/link.yaml",)),
                                message_of(tarball({"x/app.yaml": APP_BLOB}, links=("x/link.yaml",)))),
                 ERROR, E + f"{K0}: {READ_ERROR}unknown type: 2 in x/link.yaml", id="tar-symlink-errors"),
    pytest.param(APP, _sign_raw(APP, tarball({"notes.txt": b"kind: X"}),
                                message_of(tarball({"notes.txt": b"kind: X"}))), ERROR,
                 E + f"{K0}: {READ_ERROR}no YAML manifest with a kind in the tarball",
                 id="tar-without-yaml-files-errors"),
    pytest.param(APP, _sign_raw(APP, tarball({"../app.yaml": APP_BLOB, "b/list.yml": b"- 1\n",
                                              "a/app.yaml": APP_BLOB}),
                                message_of(tarball({"../app.yaml": APP_BLOB, "b/list.yml": b"- 1\n",
                                                    "a/app.yaml": APP_BLOB}))), PASS, S1,
                 id="tar-yaml-files-with-a-kind-are-read"),
    pytest.param(APP, _sign_raw(APP, MULTI_BLOB, message_of(MULTI_BLOB)), PASS, S1,
                 id="multi-document-message-picks-the-same-name"),
    pytest.param(APP_DB, _sign_raw(APP_DB, MULTI_BLOB, message_of(MULTI_BLOB)), PASS, S1,
                 id="multi-document-message-picks-the-second-deployment"),
    pytest.param(APP, _sign_raw(edit(APP, "metadata.name", "renamed"), MULTI_BLOB, message_of(MULTI_BLOB)),
                 FAIL, failed(diff_found(K0, items(item("metadata.name", '"renamed"', '"app"')))),
                 id="renamed-resource-is-ranked-by-value"),
    pytest.param(APP, _sign_raw(edit(edit(APP_DB, "metadata.name", "renamed"), "spec.replicas", 7),
                                MULTI_BLOB, message_of(MULTI_BLOB)), FAIL,
                 failed(diff_found(K0, items(item("metadata.name", '"renamed"', '"db"'),
                                             item("spec.replicas", "7", "1")))),
                 id="value-ranking-prefers-the-closest-document"),
]


@pytest.mark.parametrize(("doc", "resource", "status", "message"), MESSAGES)
def test_manifests_message_payloads(doc: dict, resource: dict, status: RuleStatus, message: str) -> None:
    assert run(manifests(keys(PEM_A)), resource) == ManifestsResult(status, message)


NUMERIC_TEAM = edit(signed(APP, SIGN_A), annotation("team"), 1)
TEAM_1 = manifests({"entries": [{"keys": {"publicKeys": PEM_A}, "annotations": {"team": "1"}}]})

STRING_MAP = [
    pytest.param(manifests(keys(PEM_A)), NUMERIC_TEAM, FAIL, failed(f"{K0}: {NOT_FOUND}message not found"),
                 id="non-string-annotation-hides-the-signature-annotations"),
    pytest.param(TEAM_1, NUMERIC_TEAM, ERROR,
                 E + "annotations mismatch:  does not match expected value 1 for key team",
                 id="non-string-annotation-is-not-read-by-the-annotations-check"),
    pytest.param(TEAM_1, signed(edit(APP, annotation("team"), "1"), SIGN_A), PASS, S1,
                 id="string-annotation-is-read"),
]


@pytest.mark.parametrize(("spec", "resource", "status", "message"), STRING_MAP)
def test_manifests_annotations_are_read_as_a_string_map(spec: dict, resource: dict, status: RuleStatus,
                                                        message: str) -> None:
    assert run(spec, resource) == ManifestsResult(status, message)


def test_manifests_multi_member_gzip_is_read_as_one_stream() -> None:
    half = len(APP_BLOB) // 2
    message = b64(gzip.compress(APP_BLOB[:half]) + gzip.compress(APP_BLOB[half:]))
    assert run(manifests(keys(PEM_A)), _sign_raw(APP, APP_BLOB, message)) == ManifestsResult(PASS, S1)


def test_manifests_truncated_gzip_is_used_as_raw_bytes() -> None:
    message = b64(gzip.compress(APP_BLOB)[:-6])
    assert run(manifests(keys(PEM_A)), _sign_raw(APP, APP_BLOB, message)) == ManifestsResult(
        ERROR, E + f"{K0}: {READ_ERROR}gzip: invalid header")


def test_manifests_oversized_message_is_refused() -> None:
    bomb = b"a: " + b"x" * (17 * 1024 * 1024) + b"\n"
    result = run(manifests(keys(PEM_A)), _sign_raw(APP, b"", message_of(bomb)))
    assert result == ManifestsResult(ERROR, E + f"{K0}: {NOT_FOUND}not supported: the decompressed "
                                             "message exceeds 16777216 bytes")


def test_manifests_same_name_prefers_the_resource_namespace() -> None:
    blob = blob_of(edit(APP, "spec.replicas", 3), SECOND_APP)
    resource = signed(SECOND_APP, SIGN_A, blob=blob)
    assert run(manifests(keys(PEM_A)), resource) == ManifestsResult(PASS, S1)
    other = signed(edit(APP, "metadata.namespace", "dev"), SIGN_A, blob=blob)
    assert run(manifests(keys(PEM_A)), other) == ManifestsResult(
        FAIL, failed(diff_found(K0, items(item("spec.replicas", "1", "3")))))


def test_manifests_without_a_yaml_loader_is_an_error() -> None:
    compiled = compile_manifests_rule(manifests(keys(PEM_A)))
    result = evaluate_manifests(compiled, signed(APP, SIGN_A), rule_name="check", operation="CREATE")
    assert result == ManifestsResult(ERROR, E + f"{K0}: {NOT_FOUND}not supported: no YAML loader is "
                                             "available to read the signed message")


@pytest.mark.parametrize(("bindings", "status"), [
    pytest.param([{"objects": [{"kind": "StatefulSet"}], "fields": ["spec.replicas"]}], FAIL,
                 id="selector-of-another-kind-does-not-apply"),
    pytest.param([{"objects": [{"group": "apps", "version": "v1", "kind": "Deploy*", "name": "app",
                                "namespace": "default"}], "fields": ["spec.replicas"]}], PASS,
                 id="selector-matching-every-field-applies"),
    pytest.param([{"objects": [{"namespace": "-"}], "fields": ["spec.replicas"]}], FAIL,
                 id="dash-namespace-selects-cluster-scoped-resources-only"),
    pytest.param([{"objects": [{"kind": "Pod"}, {"kind": "Deployment"}], "fields": ["spec"]}], PASS,
                 id="any-selector-may-match"),
])
def test_manifests_ignore_field_selectors(bindings: list[dict], status: RuleStatus) -> None:
    resource = edit(signed(APP, SIGN_A), "spec.replicas", 4)
    assert run(manifests(keys(PEM_A), ignoreFields=bindings), resource).status is status


# ---------------------------------------------------------------- policy validity
INVALID = [
    pytest.param([], [("", "must be an object")], id="block-must-be-an-object"),
    pytest.param({"attestors": {"entries": []}}, [("/attestors", "must be a list")], id="attestors-must-be-a-list"),
    pytest.param(manifests({"count": 0, "entries": []}), [("/attestors/0/count", "count must be at least 1")],
                 id="count-zero-is-invalid"),
    pytest.param(manifests({"count": "one", "entries": []}), [("/attestors/0/count", "count must be an integer")],
                 id="count-must-be-an-integer"),
    pytest.param(manifests({"entries": {"keys": {}}}), [("/attestors/0/entries", "must be a list")],
                 id="entries-must-be-a-list"),
    pytest.param(manifests({"entries": [{"keys": {"publicKeys": 42}}]}),
                 [("/attestors/0/entries/0/keys/publicKeys", "must be a string")], id="public-keys-must-be-text"),
    pytest.param(manifests({"entries": [{"keys": {"publicKeys": ALICE}, "annotations": {"team": 1}}]}),
                 [("/attestors/0/entries/0/annotations/team", "must be a string")],
                 id="annotation-values-must-be-strings"),
    pytest.param(manifests(keys(ALICE), ignoreFields=[{"objects": {"kind": "Pod"}, "fields": ["a", 1]}]),
                 [("/ignoreFields/0/objects", "must be a list"), ("/ignoreFields/0/fields/1", "must be a string")],
                 id="ignore-fields-shape"),
    pytest.param(manifests(keys(ALICE), dryRun={"enable": "yes"}), [("/dryRun/enable", "must be a boolean")],
                 id="dry-run-enable-must-be-a-boolean"),
    pytest.param(manifests(keys(ALICE), annotationDomain=3), [("/annotationDomain", "must be a string")],
                 id="annotation-domain-must-be-text"),
]


@pytest.mark.parametrize(("spec", "problems"), INVALID)
def test_manifests_spec_problems(spec: Any, problems: list[tuple[str, str]]) -> None:
    assert validate_manifests_spec(spec) == problems


def test_manifests_invalid_spec_does_not_compile() -> None:
    with pytest.raises(PolicyError, match="count must be at least 1") as caught:
        compile_manifests_rule(manifests({"count": -1, "entries": []}))
    assert caught.value.location is not None and caught.value.location.pointer == "/attestors/0/count"


@pytest.mark.parametrize("spec", [
    pytest.param(DEPLOY_POLICY, id="worked-example-policy"),
    pytest.param(NESTED_POLICY, id="nested-attestor-policy"),
    pytest.param(manifests({"entries": [{"attestor": {"count": "x"}}]}), id="nested-attestor-is-free-form"),
    pytest.param(manifests(keys("-----BEGIN PUBLIC KEY-----\ngarbage\n-----END PUBLIC KEY-----")),
                 id="unparseable-key-is-a-runtime-error"),
])
def test_manifests_valid_specs_have_no_problems(spec: dict) -> None:
    assert validate_manifests_spec(spec) == []


def test_manifests_empty_attestors_give_no_result() -> None:
    compiled = compile_manifests_rule({"attestors": []})
    assert evaluate_manifests(compiled, CM_ALICE, rule_name="check", operation="CREATE",
                              load_documents=loader) == ManifestsResult(None, "")
