"""What makes one release of a published JSON Schema break readers of an earlier one of
the same major version (richdoc_client.versions states the rule).

``breaking_changes(old, new)`` walks both schemas together, following ``$ref``s into
each one's own ``$defs``, and names every place where a document of ``new`` could fail a
reader written for ``old``, or a document of ``old`` fail ``new``: a member removed, a
member retyped (its type, enum, const, pattern, bounds, union or items changed), a
member required that was not (an added member must be optional: older documents lack
it), a closed vocabulary that gained or lost a value, unknown members refused where they
were allowed. Annotations (titles, descriptions, ``x-richdoc-*``) are not compared.
"""

from __future__ import annotations

from typing import Any

ANNOTATIONS = frozenset({"title", "description", "examples", "default", "$comment"})


def _resolve(node: Any, root: dict[str, Any]) -> Any:
    while isinstance(node, dict) and "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        node = root["$defs"][name]
    return node


def _assertions(node: dict[str, Any]) -> dict[str, Any]:
    """The keywords of a leaf that constrain values."""
    return {
        key: value
        for key, value in node.items()
        if key not in ANNOTATIONS
        and not key.startswith("x-")
        and key not in ("properties", "required", "items", "anyOf", "oneOf", "$defs")
    }


def breaking_changes(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    found: list[str] = []
    _compare(old, new, old, new, "$", found, set())
    return found


def _compare(
    old: Any,
    new: Any,
    old_root: dict[str, Any],
    new_root: dict[str, Any],
    path: str,
    found: list[str],
    seen: set[tuple[int, int]],
) -> None:
    old, new = _resolve(old, old_root), _resolve(new, new_root)
    if not (isinstance(old, dict) and isinstance(new, dict)):
        if old != new:
            found.append(f"{path}: retyped")
        return
    if (id(old), id(new)) in seen:  # recursive definitions
        return
    seen.add((id(old), id(new)))
    old_props, new_props = old.get("properties", {}), new.get("properties", {})
    for name in old_props:
        if name not in new_props:
            found.append(f"{path}.{name}: removed")
        else:
            _compare(
                old_props[name], new_props[name], old_root, new_root, f"{path}.{name}", found, seen
            )
    for name in sorted(set(new.get("required", [])) - set(old.get("required", []))):
        found.append(f"{path}.{name}: required, and was not")
    if new.get("additionalProperties") is False and old.get("additionalProperties") is not False:
        found.append(f"{path}: refuses unknown members, and did not")
    for union in ("anyOf", "oneOf"):
        old_options, new_options = old.get(union), new.get(union)
        if old_options is None and new_options is None:
            continue
        if old_options is None or new_options is None or len(old_options) != len(new_options):
            found.append(f"{path}: retyped ({union} changed)")
            continue
        for index, (a, b) in enumerate(zip(old_options, new_options, strict=True)):
            _compare(a, b, old_root, new_root, f"{path}|{index}", found, seen)
    if "items" in old or "items" in new:
        _compare(old.get("items"), new.get("items"), old_root, new_root, f"{path}[]", found, seen)
    if "additionalProperties" in old and isinstance(old["additionalProperties"], dict):
        _compare(
            old["additionalProperties"],
            new.get("additionalProperties"),
            old_root,
            new_root,
            f"{path}{{}}",
            found,
            seen,
        )
    old_leaf, new_leaf = _assertions(old), _assertions(new)
    old_leaf.pop("additionalProperties", None)
    new_leaf.pop("additionalProperties", None)
    if old_leaf.get("enum") != new_leaf.get("enum"):
        found.append(
            f"{path}: its vocabulary changed ({old_leaf.get('enum')} -> {new_leaf.get('enum')})"
        )
    old_leaf.pop("enum", None)
    new_leaf.pop("enum", None)
    if old_leaf != new_leaf:
        found.append(f"{path}: retyped ({old_leaf} -> {new_leaf})")
