"""Parse Python sources with the interpreter's own `ast` and print them as JSON for the TypeScript side.

Input (stdin): {"files": {"path": "source", ...}, "compile": bool}
Output (stdout): {"path": {"ok": true, "tree": NODE} | {"ok": false, "error": {"line", "col", "message"}}}

A NODE is {"_t": "Call", "s": start, "e": end, ...fields}, where s/e are offsets into the source
in UTF-16 code units (JavaScript string indices) — `ast` reports UTF-8 byte columns, converted here
so the TypeScript side can splice edits without re-encoding. Fields hold NODEs, lists, or plain
values (str/int/float/bool/None; other constants as their repr). With "compile", each file is also
compiled to bytecode (what py_compile does, without writing a .pyc) so syntax errors that `ast`
accepts (e.g. `return` outside a function) are caught too.
"""
import ast
import json
import sys


def line_tables(src):
    starts = [0]  # UTF-16 offset of each line start
    lines = src.split("\n")
    for ln in lines[:-1]:
        starts.append(starts[-1] + utf16_len(ln) + 1)
    return lines, starts


def utf16_len(s):
    return len(s.encode("utf-16-le")) // 2


def converter(src):
    lines, starts = line_tables(src)
    cache = {}

    def off(lineno, col):
        if lineno is None or col is None:
            return None
        key = (lineno, col)
        if key not in cache:
            text = lines[lineno - 1] if lineno - 1 < len(lines) else ""
            prefix = text.encode("utf-8")[:col].decode("utf-8", errors="replace")
            cache[key] = starts[lineno - 1] + utf16_len(prefix)
        return cache[key]

    return off


def dump(node, off):
    if isinstance(node, ast.AST):
        out = {"_t": type(node).__name__}
        if hasattr(node, "lineno") and hasattr(node, "end_lineno"):
            out["s"] = off(node.lineno, node.col_offset)
            out["e"] = off(node.end_lineno, node.end_col_offset)
            out["l"] = node.lineno
        for name, value in ast.iter_fields(node):
            out[name] = dump(value, off)
        return out
    if isinstance(node, list):
        return [dump(v, off) for v in node]
    if node is None or isinstance(node, (str, int, float, bool)):
        if isinstance(node, float) and (node != node or node in (float("inf"), float("-inf"))):
            return repr(node)
        return node
    return repr(node)


def main():
    req = json.load(sys.stdin)
    result = {}
    for path, src in sorted(req["files"].items()):
        try:
            tree = ast.parse(src, filename=path, type_comments=False)
            if req.get("compile"):
                compile(src, path, "exec", dont_inherit=True)
            result[path] = {"ok": True, "tree": dump(tree, converter(src))}
        except SyntaxError as e:
            result[path] = {"ok": False, "error": {"line": e.lineno or 1, "col": e.offset or 0, "message": e.msg}}
        except (ValueError, RecursionError) as e:
            result[path] = {"ok": False, "error": {"line": 1, "col": 0, "message": str(e)}}
    json.dump(result, sys.stdout, separators=(",", ":"))


if __name__ == "__main__":
    main()
