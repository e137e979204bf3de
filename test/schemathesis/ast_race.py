"""Builds ASTs on three threads at once for a few seconds and prints how many parses raised SystemError.

Used by test/integration/schemathesis-serial-ast.test.ts: `ast_race.py SECONDS` shows CPython 3.11's race
(gh-106905), `ast_race.py SECONDS serial` shows that serial_ast.py removes it. A finalizer that runs Python
code during a garbage collection, and a short switch interval, make the interpreter switch threads in the
middle of a construction, as schemathesis's worker threads do now and then; the finalizer parses too, so a
construction is also interrupted by another on its own thread.
"""
import ast
import sys
import threading
import time

if "serial" in sys.argv[2:]:
    import serial_ast  # noqa: F401

SOURCE = "\n".join(
    f"def f{i}(x):\n    return [(lambda y: y + {i})(z) for z in range(x) if z % 3 == {i % 3}]" for i in range(300)
)


class Finalized:
    def __del__(self):
        sum(range(200))
        ast.parse("x = [1, (2, 3)]")


def main() -> None:
    seconds = float(sys.argv[1])
    crashes = []

    def work() -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            try:
                ast.parse(SOURCE)
            except SystemError as error:
                crashes.append(error)
            a, b = Finalized(), Finalized()
            a.other, b.other = b, a

    sys.setswitchinterval(0.0001)
    threads = [threading.Thread(target=work) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print(f"python {sys.version_info.major}.{sys.version_info.minor}: {len(crashes)} SystemError")


main()
