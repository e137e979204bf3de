"""The hooks schemathesis loads for the test suite (SCHEMATHESIS_HOOKS names one module, this one)."""
import serial_ast  # noqa: F401  (patches ast.parse before any worker thread starts)
import sigv4_hooks  # noqa: F401  (registers the SigV4 signing)
