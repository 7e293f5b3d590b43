"""Arithmetic equations of math word problem datasets turned into readable steps.

``(32 + 42) - 35`` becomes ``["First we add 32 to 42 and get 74.", "Then we subtract 35 from
74 and get 39."]``. Expressions are parsed with :mod:`ast` and evaluated node by node (never
with ``eval``), so a strange formula yields ``None`` and the caller falls back to the raw text.
"""

from __future__ import annotations

import ast
import re

from thoughtdesk.core.datasets.text import format_number

_VERBS = {ast.Add: "add", ast.Sub: "subtract", ast.Mult: "multiply", ast.Div: "divide"}
_UNKNOWN = re.compile(r"\b[xX]\b")


def _phrase(op: ast.operator, left: str, right: str) -> str:
    verb = _VERBS[type(op)]
    if isinstance(op, ast.Add):
        return f"{verb} {left} to {right}"
    if isinstance(op, ast.Sub):
        return f"{verb} {right} from {left}"
    return f"{verb} {left} by {right}"


def _evaluate(node: ast.AST, steps: list[tuple[str, float]]) -> float:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body, steps)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_evaluate(node.operand, steps)
    if isinstance(node, ast.BinOp) and type(node.op) in _VERBS:
        left = _evaluate(node.left, steps)
        right = _evaluate(node.right, steps)
        if isinstance(node.op, ast.Add):
            value = left + right
        elif isinstance(node.op, ast.Sub):
            value = left - right
        elif isinstance(node.op, ast.Mult):
            value = left * right
        else:
            if right == 0:
                raise ValueError("division by zero")
            value = left / right
        steps.append((_phrase(node.op, format_number(left), format_number(right)), value))
        return value
    raise ValueError("not plain arithmetic")


def expression_steps(expression: str) -> tuple[list[str], float] | None:
    """Steps and value of an infix arithmetic expression; ``None`` if it is not plain arithmetic."""
    text = expression.replace("×", "*").replace("÷", "/").strip()
    if not text or not re.fullmatch(r"[\d.\s+\-*/()]+", text):
        return None
    try:
        tree = ast.parse(text, mode="eval")
        parts: list[tuple[str, float]] = []
        value = _evaluate(tree, parts)
    except (SyntaxError, ValueError, RecursionError):
        return None
    steps = []
    for index, (phrase, result) in enumerate(parts):
        lead = "We" if len(parts) == 1 else ("First we" if index == 0 else "Then we")
        steps.append(f"{lead} {phrase} and get {format_number(result)}.")
    return steps, value


def prefix_to_infix(tokens: list[str]) -> str:
    """Prefix notation (``* number0 + 2 3``) to a parenthesised infix string."""
    position = 0

    def read() -> str:
        nonlocal position
        if position >= len(tokens):
            raise ValueError("prefix expression ends too early")
        token = tokens[position]
        position += 1
        if token in ("+", "-", "*", "/"):
            left = read()
            right = read()
            return f"({left} {token} {right})"
        return token

    result = read()
    if position != len(tokens):
        raise ValueError("extra tokens after the prefix expression")
    return result


def equation_steps(equation: str, solution: str | float | None = None) -> list[str]:
    """Readable steps for an equation such as ``X=((32+42)-35)`` or ``70-x=27``.

    When the unknown stands alone on one side, the other side is worked out step by step;
    otherwise (``28+x=54``) the equation is stated and solved in one sentence.
    """
    text = equation.strip()
    if "=" not in text:
        result = expression_steps(text)
        return result[0] if result else [f"We compute {text}."]
    left, _, right = text.partition("=")
    left, right = left.strip(), right.strip()
    for unknown_side, other in ((left, right), (right, left)):
        if _UNKNOWN.fullmatch(unknown_side):
            result = expression_steps(other)
            if result is not None:
                return result[0] or [f"The answer is {format_number(result[1])}."]
    answer = f" and get {format_number(solution)}" if solution is not None else ""
    pretty = re.sub(r"\s*([+\-*/=])\s*", r" \1 ", text).strip()
    return [f"We solve {pretty} for x{answer}."]
