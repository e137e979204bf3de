"""Serialize ast.parse across threads: a workaround for CPython 3.11's shared AST recursion counter.

CPython 3.11 keeps the AST constructor's recursion depth in per-interpreter state (gh-106905). When two
threads build ASTs at once and the interpreter switches threads in the middle (a garbage collection that
runs a finalizer is enough), one thread's count lands in the other's and `ast.parse` raises
`SystemError: AST constructor recursion depth mismatch`. schemathesis runs its workers as threads, and
hypothesis parses source code to describe the lambdas it filters with, so a run with two workers crashes
now and then while every case it generated passed. One lock around `ast.parse` keeps two constructions
from interleaving; re-entrant because a finalizer on the same thread may parse too.
"""
import ast
import threading

_LOCK = threading.RLock()
_parse = ast.parse


def _serialized_parse(*args, **kwargs):
    with _LOCK:
        return _parse(*args, **kwargs)


ast.parse = _serialized_parse
