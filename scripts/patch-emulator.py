"""Makes the pinned MiniStack behave as AWS does where the project depends on it.

1. AWS reports a failed Node handler's `errorType` as the thrown error's `name`, and Step Functions'
   Retry and Catch match on it (`"ErrorEquals": ["NoSeedAvailableError"]`). MiniStack's warm Node
   worker drops the name and reports every handler error as `Runtime.HandlerError`, so a state
   machine could never tell "not found" from "try again" against the emulator.
2. On AWS a `lambda:invoke.waitForTaskToken` task fails at once when the function itself fails;
   MiniStack ignores the failure and waits for a callback that never comes, until the task's timeout.

The patches are idempotent and fail loudly if the emulator's code no longer matches.
"""
import pathlib
import sys

MARKER = "gardenless: errorType"
CALLBACK_MARKER = "gardenless: failed invoke fails the task"

PATCHES = {
    "core/lambda_runtime.py": [
        (
            'status: "error", error: String(err.message || err), trace: err.stack || ""',
            'status: "error", error: String(err.message || err), trace: err.stack || "", error_type: (err && err.name) || "Error" /* gardenless: errorType */',
        ),
        (
            'status: "error", error: e.message, trace: e.stack\n',
            'status: "error", error: e.message, trace: e.stack, error_type: (e && e.name) || "Error" /* gardenless: errorType */\n',
        ),
    ],
    "services/stepfunctions.py": [
        (
            """        try:
            _call_lambda(func_ref, lambda_payload)
        except _ExecutionError:
            pass
""",
            """        try:
            _call_lambda(func_ref, lambda_payload)
        except _ExecutionError:  # gardenless: failed invoke fails the task
            _task_tokens.pop(token, None)
            raise
""",
        ),
    ],
    "services/lambda_svc.py": [
        (
            '            error_type = "Runtime.HandlerError"\n            if _RIE_TIMEOUT_TEXT_RE.fullmatch(error_msg):',
            '            error_type = result.get("error_type") or "Runtime.HandlerError"  # gardenless: errorType\n            if _RIE_TIMEOUT_TEXT_RE.fullmatch(error_msg):',
        ),
    ],
}


def main(package_dir: str) -> None:
    root = pathlib.Path(package_dir)
    for relative, replacements in PATCHES.items():
        path = root / relative
        text = path.read_text()
        if MARKER in text or CALLBACK_MARKER in text:
            continue
        for old, new in replacements:
            if text.count(old) != 1:
                sys.exit(f"patch-emulator: {relative} no longer contains the expected code; update scripts/patch-emulator.py")
            text = text.replace(old, new)
        path.write_text(text)
        print(f"patch-emulator: patched {relative}")


if __name__ == "__main__":
    main(sys.argv[1])
