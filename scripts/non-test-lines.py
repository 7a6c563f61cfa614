#!/usr/bin/env python3
"""Counts the non-test lines of Rust source folders: every line of
`SRC/**/*.rs`, comments and blank lines included, minus each
`#[cfg(test)]` item (an inline `mod tests { … }` or helper, by brace
matching) and the files such items declare (`#[cfg(test)] mod tests;`).
`tests/` folders are outside `src/` and never counted.

Usage: scripts/non-test-lines.py [SRC…]   (default: crates/corobench/src)
"""
import pathlib
import re
import sys

DECLARED = re.compile(r"\s*(pub(\([a-z]+\))?\s+)?mod\s+(\w+)\s*;")


def strip_tests(text):
    """The lines of `text` outside `#[cfg(test)]` items, and the names of
    the modules such items declare in files of their own."""
    lines = text.split("\n")
    kept, i, declared = 0, 0, []
    while i < len(lines):
        if lines[i].strip() != "#[cfg(test)]":
            kept += 1
            i += 1
            continue
        j, depth, opened = i + 1, 0, False
        while j < len(lines):
            line = lines[j]
            found = DECLARED.match(line)
            if found and not opened:
                declared.append(found.group(3))
                break
            depth += line.count("{") - line.count("}")
            opened |= "{" in line
            if (opened and depth <= 0) or (not opened and line.rstrip().endswith(";")):
                break
            j += 1
        i = j + 1
    return kept, declared


def count(src):
    files = sorted(pathlib.Path(src).rglob("*.rs"))
    test_files = set()
    kept = {}
    for path in files:
        kept[path], declared = strip_tests(path.read_text())
        here = path.parent if path.name in ("mod.rs", "lib.rs", "main.rs") else path.with_suffix("")
        for name in declared:
            test_files.update({here / f"{name}.rs", here / name / "mod.rs"})
    return sum(n for path, n in kept.items() if path not in test_files)


if __name__ == "__main__":
    for src in sys.argv[1:] or ["crates/corobench/src"]:
        print(f"{count(src)}\t{src}")
