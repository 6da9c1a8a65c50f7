#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Validate cpuhp-stress reports against daemon/report/schema/report.schema.json.

    validate_report.py SCHEMA REPORT...                  every report must be valid
    validate_report.py --expect-invalid SCHEMA REPORT... every report must be rejected

Prints one line per schema error ("report.json: /run/stop_reason: ..."), then
"N passed, M failed". Exit 0 when every report met the expectation, 1 when
one did not, 2 on bad usage or an unusable schema, 77 (ctest's skip code)
when the jsonschema module is missing.
"""

import argparse
import json
import sys

try:
    from jsonschema import Draft202012Validator
except ImportError as e:
    print(f"validate_report.py: cannot import jsonschema ({e}); install python3-jsonschema",
          file=sys.stderr)
    sys.exit(77)


def pointer(path):
    """A JSON Pointer ("/per_cpu/0/cpu") for an error's location."""
    parts = [str(p).replace("~", "~0").replace("/", "~1") for p in path]
    return "/" + "/".join(parts)


def load(path):
    """(document, None) or (None, one-line reason it cannot be read as JSON)."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f), None
    except OSError as e:
        return None, f"{path}: {e.strerror}"
    except json.JSONDecodeError as e:
        return None, f"{path}: not JSON: line {e.lineno} column {e.colno}: {e.msg}"


def schema_errors(validator, path, doc):
    """One line per schema violation; empty when valid."""
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))
    return [f"{path}: {pointer(e.absolute_path)}: {e.message}" for e in errors]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--expect-invalid", action="store_true",
                        help="pass only if every report is rejected (schema self-test)")
    parser.add_argument("schema")
    parser.add_argument("reports", nargs="+")
    args = parser.parse_args()

    try:
        with open(args.schema, encoding="utf-8") as f:
            schema = json.load(f)
        Draft202012Validator.check_schema(schema)
    except (OSError, ValueError) as e:
        print(f"{args.schema}: unusable schema: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # jsonschema.SchemaError and friends
        print(f"{args.schema}: invalid schema: {getattr(e, 'message', e)}", file=sys.stderr)
        return 2
    validator = Draft202012Validator(schema)

    passed = failed = 0
    for path in args.reports:
        doc, unreadable = load(path)
        if unreadable:
            # Not a schema verdict either way: a missing fixture must not pass
            # as "rejected".
            print(unreadable)
            failed += 1
            continue
        errors = schema_errors(validator, path, doc)
        if args.expect_invalid:
            if errors:
                passed += 1
                print(f"{path}: rejected as expected ({len(errors)} errors)")
                for line in errors:
                    print(f"  {line}")
            else:
                failed += 1
                print(f"{path}: valid, but it was expected to be rejected")
        else:
            for line in errors:
                print(line)
            if errors:
                failed += 1
            else:
                passed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
