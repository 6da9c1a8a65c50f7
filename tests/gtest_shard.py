#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""One shard of a gtest binary as one ctest test (issue 27): the unit tests
ran as one process per test (gtest_discover_tests), ~0.3 s of start-up each
under ASan, 471 of them: 256 s of test slots for 52 s of tests. In shards
(gtest's own GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS: test i runs in shard
i mod TOTAL) the tests run in a handful of processes, both cores busy.

    gtest_shard.py BINARY INDEX TOTAL [GTEST_ARG...]

gtest's whole output goes to gtest-shard-INDEX.log in the working
directory (ctest's: BUILD/tests), printed whole when the shard fails; a
hang that ctest kills leaves it there. Then one line per test that skipped
itself, "SKIP-CASE Suite.Test: MESSAGE" (tests/ctest_summary.py holds each
to tests/expected-skips as CTEST:Suite.Test), and the counts, "GTEST-CASES
passed=N failed=N skipped=N". Exit 0 when every test of the shard passed or
skipped, 1 otherwise (a crash, a failure, no result file, a shard with no
test: the binary has fewer tests than shards).
"""
import json
import os
import subprocess
import sys
import tempfile


def skip_messages(log):
    """{Suite.Test: message} from gtest's output: "[ RUN      ] NAME", then
    "FILE:LINE: Skipped" and the message on the next line."""
    out, current, lines = {}, None, log.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("[ RUN      ] "):
            current = line[13:].strip()
        elif line.endswith(": Skipped") and current and i + 1 < len(lines):
            out.setdefault(current, lines[i + 1].strip())
    return out


def main(argv):
    if len(argv) < 4:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    binary, index, total = argv[1], int(argv[2]), int(argv[3])
    log_path = os.path.abspath(f"gtest-shard-{index}.log")
    with tempfile.TemporaryDirectory(prefix="gtest-shard.") as d:
        result = os.path.join(d, "result.json")
        env = dict(os.environ, GTEST_SHARD_INDEX=str(index), GTEST_TOTAL_SHARDS=str(total))
        env.pop("GTEST_SHARD_STATUS_FILE", None)
        with open(log_path, "w") as log:
            rc = subprocess.run([binary, f"--gtest_output=json:{result}"] + argv[4:], env=env,
                                stdout=log, stderr=subprocess.STDOUT).returncode
        with open(log_path, errors="replace") as f:
            text = f.read()
        try:
            with open(result) as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            print(text)
            print(f"gtest_shard: {binary} shard {index}/{total} exited {rc} and left no "
                  f"readable result ({e}): a crash or an abort (output above)")
            return 1
    messages = skip_messages(text)
    passed = failed = skipped = 0
    for suite in doc.get("testsuites", []):
        for t in suite.get("testsuite", []):
            name = f"{suite['name']}.{t['name']}"
            if t.get("failures"):
                failed += 1
            elif t.get("result") == "SKIPPED":
                skipped += 1
                print(f"SKIP-CASE {name}: {messages.get(name) or '(GTEST_SKIP without a message)'}")
            elif t.get("result") == "COMPLETED":
                passed += 1
    if rc != 0 or failed:
        print(text)
    print(f"GTEST-CASES passed={passed} failed={failed} skipped={skipped}")
    if passed + failed + skipped == 0:
        print(f"gtest_shard: shard {index}/{total} of {binary} ran no test")
        return 1
    return 1 if rc != 0 or failed else 0

if __name__ == "__main__":
    sys.exit(main(sys.argv))
