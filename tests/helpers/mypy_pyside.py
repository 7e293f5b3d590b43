"""A mypy plugin: PySide6 constructors accept Qt properties as keyword arguments.

``QLabel(objectName="x")`` or ``QTimer(self, singleShot=True, interval=150)`` set Qt properties
at construction, as PySide6 documents, but its stubs do not declare them, so mypy would report
every such call. This plugin adds ``**properties: Any`` to the constructors of QObject
subclasses from PySide6 (and only to those), so the rest of each call is still checked.
Configured in pyproject.toml (``[tool.mypy] plugins``).
"""

from __future__ import annotations

from collections.abc import Callable

from mypy.nodes import ARG_STAR2, TypeInfo
from mypy.plugin import FunctionSigContext, Plugin
from mypy.types import AnyType, FunctionLike, TypeOfAny


def _accept_properties(ctx: FunctionSigContext) -> FunctionLike:
    signature = ctx.default_signature
    if ARG_STAR2 in signature.arg_kinds:
        return signature
    return signature.copy_modified(
        arg_types=[*signature.arg_types, AnyType(TypeOfAny.explicit)],
        arg_kinds=[*signature.arg_kinds, ARG_STAR2],
        arg_names=[*signature.arg_names, "properties"],
    )


class PySidePropertiesPlugin(Plugin):
    def get_function_signature_hook(self, fullname: str) -> Callable[[FunctionSigContext], FunctionLike] | None:
        if not fullname.startswith("PySide6."):
            return None
        symbol = self.lookup_fully_qualified(fullname)
        if symbol is not None and isinstance(symbol.node, TypeInfo) and symbol.node.has_base("PySide6.QtCore.QObject"):
            return _accept_properties
        return None


def plugin(version: str) -> type[Plugin]:
    return PySidePropertiesPlugin
