"""`load_node_pools`: the `NodePool`s of a YAML file, for `gkeml nodepool` and tools alike."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gkeml_sdk.core.spec_text import load_yaml_all, read_spec_file
from gkeml_sdk.errors import SpecError
from gkeml_sdk.nodepools.model import NodePool

_FIX = "a list of pools, `- {name: l4, hardware: {model: l4}, spot: true}`, or documents " + (
    "with `kind: NodePool`"
)


def load_node_pools(path: str | Path) -> list[NodePool]:
    """Every `NodePool` in YAML file `path`: documents that are each a list of `NodePool`
    fields or one mapping of them (`kind: NodePool` optional there).

    Example:
        >>> import tempfile, os
        >>> with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        ...     _ = f.write("- name: l4\\n  hardware: {model: l4}\\n  spot: true\\n")
        >>> [pool.pool_names for pool in load_node_pools(f.name)]
        [['l4']]
        >>> os.unlink(f.name)
    """
    file, text = read_spec_file(path, fix=f"pass a YAML file of node pools: {_FIX}")
    pools: list[NodePool] = []
    for document in load_yaml_all(text, str(file)):
        for fields in document if isinstance(document, list) else [document]:
            if fields is not None:
                pools.append(_pool(file, fields, len(pools)))
    if not pools:
        raise SpecError(f"{file}: no node pool found", fix=_FIX)
    names = [name for pool in pools for name in pool.pool_names]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise SpecError(
            f"{file}: node pool name(s) {', '.join(twice)} used twice",
            rule="pool names are unique in a cluster; a multislice pool NAME takes NAME-0, ...",
            fix="rename one of them",
        )
    return pools


def _pool(file: Path, fields: Any, index: int) -> NodePool:
    if not isinstance(fields, dict):
        raise SpecError(f"{file}: node pool #{index + 1} is not a mapping of fields", fix=_FIX)
    fields = dict(fields)
    kind = fields.pop("kind", "NodePool")
    if kind != "NodePool":
        raise SpecError(
            f"{file}: kind {kind!r} in a node pool file",
            rule="gkeml nodepool reads NodePool fields only",
            fix="kind: NodePool, or drop kind",
        )
    try:
        return NodePool.model_validate(fields)
    except SpecError as err:
        name = fields.get("name", f"#{index + 1}")
        raise SpecError(
            f"{file}: node pool {name}: {err.what}", rule=err.rule, fix=err.fix, field=err.field
        ) from None
