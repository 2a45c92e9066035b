"""Checks a Python example's calls against the Python SDK generated from the schema, without installing Pulumi.

python3 -m compileall proves the example and the SDK parse; this also proves that every keyword argument the
example gives a component or an input type is one its generated __init__ takes, and that every enum member it
names exists: the mistakes a type checker would catch first. Usage: check_python.py <sdk dir> <example.py>...
"""

import ast
import pathlib
import sys


def sdk_signatures(package: pathlib.Path):
    """Keyword arguments of every generated class's __init__, and the members of every enum, by class name."""
    kwargs, members = {}, {}
    for path in package.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.ClassDef):
                continue
            names = set()
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                    names |= {a.arg for a in item.args.kwonlyargs}
                    names |= {a.arg for a in item.args.args[1:]}
                if isinstance(item, ast.Assign):
                    members.setdefault(node.name, set()).update(t.id for t in item.targets if isinstance(t, ast.Name))
            if names:
                kwargs.setdefault(node.name, set()).update(names)
    return kwargs, members


def check(example: pathlib.Path, alias: str, kwargs, members):
    problems = []
    for node in ast.walk(ast.parse(example.read_text(), str(example))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                isinstance(node.func.value, ast.Name) and node.func.value.id == alias:
            cls = node.func.attr
            if cls not in kwargs:
                problems.append(f"{example}:{node.lineno}: {alias}.{cls} is not in the SDK")
                continue
            for kw in node.keywords:
                if kw.arg not in kwargs[cls]:
                    problems.append(f"{example}:{node.lineno}: {alias}.{cls} takes no argument {kw.arg}")
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) and \
                isinstance(node.value.value, ast.Name) and node.value.value.id == alias and node.value.attr in members:
            if node.attr not in members[node.value.attr]:
                problems.append(f"{example}:{node.lineno}: {alias}.{node.value.attr} has no member {node.attr}")
    return problems


def main():
    sdk, examples = pathlib.Path(sys.argv[1]), sys.argv[2:]
    package = next(p for p in sdk.iterdir() if (p / "__init__.py").exists())
    kwargs, members = sdk_signatures(package)
    problems, calls = [], 0
    for e in examples:
        path = pathlib.Path(e)
        tree = ast.parse(path.read_text(), e)
        aliases = [a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names if a.name == package.name]
        if not aliases:
            problems.append(f"{e}: does not import {package.name}")
            continue
        calls += sum(1 for n in ast.walk(tree) if isinstance(n, ast.Call))
        problems += check(path, aliases[0], kwargs, members)
    if problems:
        print("\n".join(problems))
        sys.exit(1)
    print(f"{len(examples)} example(s) match the {package.name} SDK ({calls} calls)")


if __name__ == "__main__":
    main()
