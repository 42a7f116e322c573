"""YAML/JSON text -> documents with lines: the one entry point of the YAML readers.

Documents are plain JSON-shaped data read as Kyverno reads them (go-yaml v2 through
sigs.k8s.io/yaml), positions kept beside the data. The fast readers (plain block text,
kubectl List dumps) give up to libyaml on anything they do not fully handle. Nothing here
knows about Kubernetes objects: what a document means is the caller's business.

Modules: ``reader`` (iter_documents: the way through), ``loader`` (the libyaml loader),
``block`` (the block-style fast reader), ``lists`` (List dumps cut into items), ``events``
(composition from libyaml's events, for deep or very large text), ``limits`` (bounds on
untrusted text), ``document`` (a document and its located errors), ``scalars`` (go-yaml v2's
plain scalar rules).
"""

from __future__ import annotations

from scanner.yamldoc.block import read_block_documents
from scanner.yamldoc.document import ErrorHandler, YamlDocument
from scanner.yamldoc.limits import DEFAULT_LIMITS, YamlLimits, nesting_bound
from scanner.yamldoc.lists import ItemText, large_list_items
from scanner.yamldoc.loader import Loader
from scanner.yamldoc.reader import (
    check_file_size,
    iter_documents,
    iter_list_items,
    load_documents,
    load_yaml_value,
    load_yaml_values,
)

__all__ = [
    "DEFAULT_LIMITS",
    "ErrorHandler",
    "ItemText",
    "Loader",
    "YamlDocument",
    "YamlLimits",
    "check_file_size",
    "iter_documents",
    "iter_list_items",
    "large_list_items",
    "load_documents",
    "load_yaml_value",
    "load_yaml_values",
    "nesting_bound",
    "read_block_documents",
]
