"""Serialize ast.parse across threads: a workaround for CPython 3.11's shared AST recursion counter.

CPython 3.11 keeps the AST constructor's recursion depth in per-interpreter state (gh-106905). When two
threads build ASTs at once and the interpreter switches threads in the middle (a garbage collection that
runs a finalizer is enough), one thread's count lands in the other's and `ast.parse` raises
`SystemError: AST constructor recursion depth mismatch`. schemathesis runs its workers as threads, and
hypothesis parses source code to describe the lambdas it filters with, so a run with two workers crashes
now and then while every case it generated passed. One lock around `ast.parse` keeps two constructions
from interleaving. The same thread can interleave with itself: a garbage collection in the middle of a
construction runs finalizers, and one that parses resets the shared counter under the outer parse. So the
collector is held off while a parse runs (the lock is re-entrant for parses made outside a collection).
"""
import ast
import gc
import threading

_LOCK = threading.RLock()
_parse = ast.parse


def _serialized_parse(*args, **kwargs):
    with _LOCK:
        collecting = gc.isenabled()
        gc.disable()
        try:
            return _parse(*args, **kwargs)
        finally:
            if collecting:
                gc.enable()


ast.parse = _serialized_parse
