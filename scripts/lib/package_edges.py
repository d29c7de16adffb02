"""Checks that Package.swift's target dependencies are exactly the Parley modules each target imports: no edge
that no import uses, no import that no edge declares (SwiftPM lets a target import what it only reaches
transitively, so the compiler does not catch it). Exit 1 with one line per target that differs."""
import glob
import os
import re
import sys

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
package = open(os.path.join(root, "Package.swift")).read()
targets = {}
for match in re.finditer(r'\.(target|executableTarget|testTarget|systemLibrary)\(name:\s*"([^"]+)"', package):
    start = match.start() + 1 + len(match.group(1))
    depth, end = 0, start
    while True:  # the declaration's closing parenthesis
        depth += {"(": 1, ")": -1}.get(package[end], 0)
        if depth == 0:
            break
        end += 1
    body = package[start:end]
    dependencies = re.search(r"dependencies:\s*\[(.*?)\]", body, re.S)
    path = re.search(r'path:\s*"([^"]+)"', body)
    kind, name = match.group(1), match.group(2)
    default = ("Tests/" if kind == "testTarget" else "Sources/") + name
    targets[name] = (kind, set(re.findall(r'"([^"]+)"', dependencies.group(1))) if dependencies else set(),
                     path.group(1) if path else default)

problems = []
for name, (kind, declared, path) in sorted(targets.items()):
    if kind == "systemLibrary":
        continue
    imported = set()
    for file in glob.glob(os.path.join(root, path, "**", "*.swift"), recursive=True):
        for line in open(file):
            found = re.match(r"\s*(?:@testable\s+|@_exported\s+|@preconcurrency\s+)?import\s+(\w+)", line)
            if found and found.group(1) in targets:
                imported.add(found.group(1))
    if imported != declared:
        problems.append(f"{name}: declared but not imported {sorted(declared - imported)}, "
                        f"imported but not declared {sorted(imported - declared)}")
for problem in problems:
    print(f"Package.swift: {problem}")
sys.exit(1 if problems else 0)
