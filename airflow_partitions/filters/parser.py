"""Recursive-descent parser: filter text -> :mod:`~airflow_partitions.filters.ast` tree.

Grammar (keywords and names case-insensitive)::

    expr      := and_expr (OR and_expr)*
    and_expr  := not_expr (AND not_expr)*
    not_expr  := NOT not_expr | '(' expr ')' | predicate
    predicate := value cmp_op value
               | value [NOT] LIKE string [ESCAPE string]
               | value [NOT] IN '(' literal (',' literal)* ')'
               | value [NOT] BETWEEN literal AND literal
               | value IS [NOT] NULL
    value     := literal | column | func '(' value (',' value)* ')' | CAST '(' value AS type ')'
    literal   := string | integer | DATE string | yyyy-mm-dd

A parenthesised group is kept as one node, so printing and re-parsing round-trips exactly.
Nesting is limited (:data:`MAX_DEPTH`) so hostile input cannot exhaust the stack.
"""

from __future__ import annotations

import datetime as dt
from typing import Final, NoReturn, cast

from airflow_partitions.filters import ast
from airflow_partitions.filters.errors import FilterSyntaxError
from airflow_partitions.filters.lexer import Token, tokenize

MAX_DEPTH: Final = 100


def parse_filter(text: str) -> ast.Expr:
    """Parse a filter string; any problem raises :class:`FilterSyntaxError` with a caret line."""
    parser = _Parser(text)
    expr = parser.expr()
    if parser.peek().kind != "eof":
        tok = parser.peek()
        parser.fail("expected AND, OR or the end of the filter", tok)
    return expr


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.i = 0
        self.depth = 0

    # -- helpers ------------------------------------------------------------------------------
    def peek(self, ahead: int = 0) -> Token:
        return self.tokens[min(self.i + ahead, len(self.tokens) - 1)]

    def next(self) -> Token:
        tok = self.peek()
        self.i = min(self.i + 1, len(self.tokens) - 1)
        return tok

    def fail(self, message: str, tok: Token | None = None) -> NoReturn:
        raise FilterSyntaxError(message, self.text, (tok or self.peek()).pos)

    def is_word(self, word: str, ahead: int = 0) -> bool:
        tok = self.peek(ahead)
        return tok.kind == "ident" and tok.text == word

    def accept_word(self, word: str) -> bool:
        if self.is_word(word):
            self.i += 1
            return True
        return False

    def expect_word(self, word: str, message: str) -> None:
        if not self.accept_word(word):
            self.fail(message)

    def expect(self, kind: str, message: str) -> Token:
        if self.peek().kind != kind:
            self.fail(message)
        return self.next()

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            self.fail(f"nesting deeper than {MAX_DEPTH} levels")

    # -- boolean structure ---------------------------------------------------------------------
    def expr(self) -> ast.Expr:
        items = [self.and_expr()]
        while self.accept_word("or"):
            items.append(self.and_expr())
        return items[0] if len(items) == 1 else ast.Or(tuple(items))

    def and_expr(self) -> ast.Expr:
        items = [self.not_expr()]
        while self.accept_word("and"):
            items.append(self.not_expr())
        return items[0] if len(items) == 1 else ast.And(tuple(items))

    def not_expr(self) -> ast.Expr:
        self.enter()
        try:
            if self.accept_word("not"):
                return ast.Not(self.not_expr())
            if self.peek().kind == "(":
                self.next()
                inner = self.expr()
                self.expect(")", "expected ')'")
                return inner
            return self.predicate()
        finally:
            self.depth -= 1

    # -- predicates ---------------------------------------------------------------------------
    def predicate(self) -> ast.Expr:
        tok = self.peek()
        if tok.kind in ("eof", ")", ",", "op") or (
            tok.kind == "ident" and tok.text in ("and", "or", "like", "in", "between", "is",
                                                 "escape", "null", "as")
        ):
            self.fail("expected a comparison")
        left = self.value()
        tok = self.peek()
        if tok.kind == "op":
            self.next()
            return ast.Compare(left, cast(ast.CompareOp, tok.text), self.value())
        if self.accept_word("is"):
            negated = self.accept_word("not")
            self.expect_word("null", "expected NULL")
            return ast.IsNull(left, negated)
        negated = self.accept_word("not")
        if self.accept_word("like"):
            pattern = self.expect("string", "expected a quoted LIKE pattern").text
            escape = None
            if self.accept_word("escape"):
                esc_tok = self.expect("string", "expected a quoted escape character")
                if len(esc_tok.text) != 1:
                    self.fail("ESCAPE takes exactly one character", esc_tok)
                escape = esc_tok.text
            return ast.Like(left, pattern, escape, negated)
        if self.accept_word("in"):
            self.expect("(", "expected '(' after IN")
            items = [self.literal()]
            while self.peek().kind == ",":
                self.next()
                items.append(self.literal())
            self.expect(")", "expected ',' or ')'")
            return ast.In(left, tuple(items), negated)
        if self.accept_word("between"):
            low = self.literal()
            self.expect_word("and", "expected AND in BETWEEN ... AND ...")
            return ast.Between(left, low, self.literal(), negated)
        if negated:
            self.fail("expected LIKE, IN or BETWEEN after NOT")
        self.fail("expected a comparison operator, LIKE, IN, BETWEEN or IS")

    # -- values -------------------------------------------------------------------------------
    def literal(self) -> ast.Const:
        tok = self.peek()
        if tok.kind in ("string", "int", "date"):
            self.next()
            assert isinstance(tok.value, str | int | dt.date)
            return ast.Const(tok.value)
        if self.is_word("date") and self.peek(1).kind == "string":
            self.next()
            text_tok = self.next()
            return ast.Const(self._date(text_tok))
        self.fail("expected a literal (a quoted string, an integer or a date)")

    def _date(self, tok: Token) -> dt.date:
        parts = tok.text.split("-")
        if [len(p) for p in parts] == [4, 2, 2] and all(p.isascii() and p.isdigit()
                                                         for p in parts):
            try:
                return dt.date.fromisoformat(tok.text)
            except ValueError:
                pass
        self.fail(f"DATE needs 'yyyy-mm-dd', got {tok.text!r}", tok)

    def value(self) -> ast.Value:
        tok = self.peek()
        if tok.kind in ("string", "int", "date") or (
            self.is_word("date") and self.peek(1).kind == "string"
        ):
            return self.literal()
        if tok.kind == "qident":
            self.next()
            return ast.Column(tok.text)
        if tok.kind != "ident":
            self.fail("expected a column, a function call or a literal")
        if self.peek(1).kind == "(":
            return self.call()
        if tok.text in ast.RESERVED:
            self.fail(f"{tok.text.upper()} is a keyword; quote a column of that name as "
                      f"`{tok.text}`")
        self.next()
        return ast.Column(tok.text)

    def call(self) -> ast.Value:
        name_tok = self.next()
        self.next()  # '('
        self.enter()
        try:
            if name_tok.text == "cast":
                arg = self.value()
                self.expect_word("as", "expected AS in cast(x AS type)")
                type_tok = self.peek()
                if type_tok.kind != "ident" or type_tok.text not in ast.CAST_TYPES:
                    self.fail("expected int, string or date")
                self.next()
                self.expect(")", "expected ')'")
                return ast.Cast(arg, type_tok.text)
            if name_tok.text not in ast.FUNCTIONS:
                self.fail(
                    f"unknown function {name_tok.text!r}; known: cast, "
                    + ", ".join(sorted(ast.FUNCTIONS)),
                    name_tok,
                )
            args = [self.value()]
            while self.peek().kind == ",":
                self.next()
                args.append(self.value())
            self.expect(")", "expected ',' or ')'")
            return ast.Call(name_tok.text, tuple(args))
        finally:
            self.depth -= 1
