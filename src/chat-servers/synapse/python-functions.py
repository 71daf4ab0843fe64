"""Every function of the Python files named on the command line, found by Python's own parser.

Prints one JSON object: each path maps to its functions, or to {"error": why}. A function is
named as CPython names its code object (co_qualname: Class.method, outer.<locals>.inner,
f.<locals>.<listcomp>, <lambda>) and placed at co_firstlineno, which is the first
decorator's line for a decorated function: the name and line py-spy --function reports for
a frame. "line" is the def line itself and "end" the last line of the body.
"""

import ast
import json
import sys

# Comprehensions run as code objects of their own (generator expressions on every version;
# list, set and dict comprehensions up to 3.11, inlined from 3.12 on).
COMPREHENSIONS = {
    ast.ListComp: "<listcomp>",
    ast.SetComp: "<setcomp>",
    ast.DictComp: "<dictcomp>",
    ast.GeneratorExp: "<genexpr>",
}


def functions(tree):
    found = []

    def add(node, qualname, first):
        found.append({"qualname": qualname, "first": first, "line": node.lineno, "end": node.end_lineno})

    def visit_all(nodes, prefix):
        for node in nodes:
            if node is not None:
                visit(node, prefix)

    def visit(node, prefix):
        # What a scope's header holds (decorators, defaults, annotations, bases, a
        # comprehension's first iterable) runs in the enclosing scope; its body in its own.
        # CPython adds ".<locals>" below a function or a lambda, not below a class or a
        # comprehension (compile.c compiler_set_qualname).
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            qualname = prefix + node.name
            add(node, qualname, min([d.lineno for d in node.decorator_list] + [node.lineno]))
            args = node.args
            visit_all(node.decorator_list + args.defaults + args.kw_defaults + [node.returns], prefix)
            visit_all([a.annotation for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg] if a is not None], prefix)
            visit_all(node.body, qualname + ".<locals>.")
        elif isinstance(node, ast.ClassDef):
            # A class body is a code object too (it runs once, at import).
            qualname = prefix + node.name
            add(node, qualname, min([d.lineno for d in node.decorator_list] + [node.lineno]))
            visit_all(node.decorator_list + node.bases + [k.value for k in node.keywords], prefix)
            visit_all(node.body, qualname + ".")
        elif isinstance(node, ast.Lambda):
            qualname = prefix + "<lambda>"
            add(node, qualname, node.lineno)
            visit_all(node.args.defaults + node.args.kw_defaults, prefix)
            visit(node.body, qualname + ".<locals>.")
        elif type(node) in COMPREHENSIONS:
            qualname = prefix + COMPREHENSIONS[type(node)]
            add(node, qualname, node.lineno)
            first, *rest = node.generators
            visit(first.iter, prefix)
            inner = qualname + "."
            visit_all([first.target] + first.ifs, inner)
            for generator in rest:
                visit_all([generator.target, generator.iter] + generator.ifs, inner)
            visit_all([node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt], inner)
        else:
            visit_all(ast.iter_child_nodes(node), prefix)

    visit_all(tree.body, "")
    return found


def main(paths):
    out = {}
    for path in paths:
        try:
            with open(path, "rb") as f:
                out[path] = functions(ast.parse(f.read(), filename=path))
        except (OSError, SyntaxError, ValueError) as error:
            out[path] = {"error": "%s: %s" % (type(error).__name__, error)}
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1:])
