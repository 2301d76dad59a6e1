"""A Griffe extension for the API reference (mkdocs.yml loads it by path).

- Every pydantic model gets a "Fields" table: each field with its type (from the source), its
  default and its one-line meaning (both from the live model: the meaning is the field's
  `description`, the same text `help(Model)` shows).
- `Example:` sections (our docstrings' spelling) are read as Google-style `Examples:`, so their
  doctest lines render as Python code instead of nested block quotes.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

import griffe
from pydantic import BaseModel

_EXAMPLE = re.compile(r"^(\s*)Example:[ \t]*$", re.M)


class ModelFields(griffe.Extension):
    """Fields tables for pydantic models, doctest examples as code."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        for obj in _objects(pkg):
            if obj.docstring is not None:
                obj.docstring.value = _EXAMPLE.sub(r"\1Examples:", obj.docstring.value)
            if isinstance(obj, griffe.Class):
                model = _live_model(obj)
                if model is not None and obj.docstring is not None:
                    _add_fields(obj, model)


def fields_of(model: type[BaseModel]) -> list[tuple[str, str, str | None]]:
    """(name, meaning, default) of each field, in declaration order; the meaning is the field's
    description ("" when it has none), the default None when the field is required."""
    rows = []
    for name, info in model.model_fields.items():
        default = None
        if not info.is_required():
            default = repr(info.get_default(call_default_factory=True))
        rows.append((name, info.description or "", default))
    return rows


def _add_fields(cls: griffe.Class, model: type[BaseModel]) -> None:
    assert cls.docstring is not None
    sections = list(cls.docstring.parsed)
    rows = []
    for name, meaning, default in fields_of(model):
        member = cls.all_members.get(name)
        annotation = getattr(member, "annotation", None)
        rows.append(
            griffe.DocstringParameter(
                name, description=meaning, annotation=annotation, value=default
            )
        )
    at = next(
        (i for i, s in enumerate(sections) if isinstance(s, griffe.DocstringSectionExamples)),
        len(sections),
    )
    sections.insert(at, griffe.DocstringSectionParameters(rows, title="Fields"))
    cls.docstring.__dict__["parsed"] = sections  # `parsed` is a cached property


def _objects(module: griffe.Module) -> list[griffe.Object]:
    found: list[griffe.Object] = []
    todo: list[griffe.Object] = [module]
    while todo:
        obj = todo.pop()
        found.append(obj)
        todo.extend(m for m in obj.members.values() if not m.is_alias)  # type: ignore[misc]
    return found


def _live_model(cls: griffe.Class) -> type[BaseModel] | None:
    try:
        live = getattr(importlib.import_module(cls.module.path), cls.name)
    except (ImportError, AttributeError):
        return None
    is_model = isinstance(live, type) and issubclass(live, BaseModel)
    return live if is_model and "model_fields" in dir(live) else None
