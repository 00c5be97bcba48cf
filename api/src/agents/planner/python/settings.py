"""The settings a user can change in each Python file, read with the interpreter's own `ast`.

Nothing is imported or run: only `ast.parse` of the text. Read by settings/listSettings.ts,
which adds ids and files, parses the config files and narrows the surface to one entry point.

A Jupyter notebook (a path ending .ipynb, its JSON as the source) is read as its settings cell:
the `parameters`-tagged cell, else the first code cell (read_notebook; `cell` gives its number).

Input (stdin): {"files": {"path": "source", ...}, "maxChars": N, "budgetSeconds": S} (files read in
the order given; once S seconds are spent, the rest are answered "not read" — the first is always read)
Output (stdout): {"path": FILE, ...} where FILE is
    {"ok": true, "settings": [SETTING, ...], "reads": [{"path": "conf/x.yaml", "line": N, "hydra": bool}],
     "imports": [{"module": "a.b"|null, "level": 0, "names": ["c"]}], "configurator": "configurator.py"|null,
     "configShaped": bool, "mains": ["main()", ...], "mainGuard": bool, "fromCli": bool,
     "configFunctions": [CONFIG_FUNCTION, ...], "mergesArgs": bool}
  or {"ok": false, "error": "SyntaxError: invalid syntax (line 3)"}
and SETTING has the fields of contract.ts's Setting except id and file, plus `scope`.

What each form gives:
  argparse  add_argument("--x", ...) → kind flag (dest as name; type, default, help, choices,
            nargs, action, aliases); add_argument("x") → kind positional with its position
  absl      flags.DEFINE_integer("epochs", 10, "help") (and float, string, boolean, enum with its
            values, list, multi_*) → flag --epochs
  click     @click.option → flag; @click.argument → positional (decorator order)
  typer     a command's parameters (typer.run(fn), @app.command()): with a default → flag
            --name-with-dashes, without (or typer.Argument) → positional; Annotated[...] too
  sys.argv  `n = int(sys.argv[1])` (when no parser declares positionals) → kind positional,
            position 0, named for its variable, typed by int()/float(), a default from
            `… if len(sys.argv) > 1 else 100`
  fire      fire.Fire(fn) → fn's parameters (a class: its __init__'s): with a default → flag
            --name, without → positional
  configurator  a script that runs exec(open('configurator.py').read()): its module-level globals
            assigned before that line with a literal (or a pure arithmetic of numbers, `5 * 8`) →
            kind configurator, flag --name (changed as --name=value)
  constants module-level assignments (also inside `if __name__ == "__main__":` and in the body of
            `def main()` or the function the main guard calls; `scope` says where) of a literal
            value: `LR = 3e-4`, `layers = [64, 64]`, `a, b = 1, 2`, `lr: float = 3e-4`, `N = 2**10`
            (numbers and operators only: one setting spanning the expression); a dict
            literal's keys as `name.key`; `cfg.lr = 0.1` / `cfg["lr"] = 0.1` as `cfg.lr`.
            Otherwise each numeric literal inside the assigned expression is one constant named
            for the target, its span the literal's, `expression` the statement's source
            (`dt = 0.1*dx*dx` → dt = 0.1; of a statement over several lines, the one-line call or
            the line around the literal: `classifiers = … SVC(gamma=2, C=1) …`); a literal passed as a call's keyword argument is named
            by the keyword, its help naming the call and the target (`clf = svm.SVC(gamma=0.001)`
            → gamma, "gamma= of svm.SVC in clf"; not those of plotting, printing or logging calls), a dict's value by its string key (`{"damping":
            0.77}` → damping, also in a function), one passed by position says which argument of
            which call it is ("argument 1 of KNeighborsClassifier in classifiers"). Not settings:
            a power (`dx**2`), 0.0/1.0/-1.0 in arithmetic (`1.0 / (nx - 1)`), an axis
            (`dim=1`), subscript indices (`x[:, 1]`), the ints 0, 1 and -1 unless passed by
            keyword (offsets, shapes, `1 - p`), strings and
            booleans inside expressions, f-strings, multi-line strings, empty containers (`seen = []`),
            names starting with `_`, arithmetic inside a function (`4 * share`: only call arguments
            count there, `randn(256, 3)`, `lr=0.1`), and state —
            a name that is also augmented (`n += 1`), a loop or `with` target, assigned again
            inside a block of the scope (`if ddp: device = …`), or declared `global` in a function
            (configurator globals excepted: the command line sets them whatever comes later). A
            later literal replaces an earlier one (what the program uses), as does a computed value
            that does not read it; every literal of every expression is kept.
  in loops  `future = 1000` inside a loop's or a `with`'s body (not under an `if`), the name's only
            binding in the scope: a constant like one at the top
  calls     a module-level (main-guard, main()) call made for its effect: each literal passed to it,
            named by its keyword, else by the function (`torch.manual_seed(1337)` → manual_seed,
            `model.fit(X, y, epochs=10)` → epochs); not output, plotting, logging or exit calls
  help      a constant's (a configurator global's, a settings-class field's, a config function
            step's) comment lines right above it (not a section title over a group of assignments,
            `# model` over n_layer, n_head, …, unless it names the constant) and its trailing
            comment; of several names bound
            together (`N, D_in, H = 64, 1000, 100` under `# N is batch size; D_in is input
            dimension; H is hidden dimension`) each gets the clause about it
  loops     the count of a loop of the module, the main guard or a main function: `for t in
            range(500):` → constant `t` (`loop_count` for `_`) at the literal 500, help "number of
            iterations of the loop at line N", `expression` the loop's head; `while step < 500:` →
            `step` at 500 (its iterations when the body counts `step += 1`, else its bound)
  classes   a settings class's fields (@dataclass, pydantic, or named *Config/*Args/*Params/…): flags
            when tyro.cli(C) (--field-name) or HfArgumentParser(C) (--field_name) reads it, else
            constants `C.field` with the default's span
  config functions  get_config() / Class.get_default_config() building a CfgNode / ConfigDict
            (`C.trainer.max_iters = None`, `C.trainer = Trainer.get_default_config()`): returned as
            ordered steps in `configFunctions` (listSettings.ts follows the includes across files);
            `mergesArgs` when the file calls merge_from_args (`--trainer.max_iters=100`)
  env       os.environ.get("X", d) / os.getenv("X", d) / os.environ["X"] / os.environ.setdefault
            anywhere in the file → kind env (type from a wrapping int()/float()/bool() or the default)
  reads     literal paths with a config extension (.json .yaml .yml .toml .ini .cfg) that the code
            opens or loads (not ones it writes); os.path.join of literals; @hydra.main's
            config_path/config_name

Spans are `ast`'s: 1-based lines, 0-based columns in UTF-8 bytes, end exclusive (a rewrite converts
them to string offsets per line). A negative number's span includes its minus sign; a file that starts
with a byte-order mark has its 3 bytes counted on line 1.
"""
import ast
import gc
import json
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from entrypoints import const, kw, src, strings, type_name  # noqa: E402  (the shared readers of call arguments)

# Statements whose bodies are blocks (match and try* only exist in newer Pythons).
BLOCKS = tuple(getattr(ast, n) for n in ("If", "For", "AsyncFor", "While", "With", "AsyncWith", "Try", "TryStar", "Match") if hasattr(ast, n))
CONFIG_FUNCTION = re.compile(r"^(get_)?(default_)?(config|cfg|defaults?|default_config|hparams)$")
CONFIG_EXTS = (".json", ".yaml", ".yml", ".toml", ".ini", ".cfg")
WRITE_CALLS = {"dump", "safe_dump", "write_text", "write_bytes", "to_json", "to_yaml", "save", "savefig", "to_csv", "write"}
MAX_DEFAULT = 300
MAX_DICT_DEPTH = 6


BOM = "\ufeff"
# Columns on line 1 of a file that starts with a byte-order mark: ast reads the text without it, the
# file (and a rewrite of it) has its 3 bytes. Set per file by FileReader.
bom_shift = 0


def span(node):
    first = bom_shift if node.lineno == 1 else 0
    last = bom_shift if node.end_lineno == 1 else 0
    return {"line": node.lineno, "col": node.col_offset + first, "endLine": node.end_lineno, "endCol": node.end_col_offset + last}


def is_number(node):
    """An int/float literal, or a negated one (its span then includes the minus)."""
    if isinstance(node, ast.Constant):
        return type(node.value) in (int, float)
    return isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)) and isinstance(node.operand, ast.Constant) and type(node.operand.value) in (int, float)


def literal(node):
    """(True, value) when the node is a literal (ast.literal_eval), else (False, None)."""
    if isinstance(node, ast.JoinedStr):
        return False, None
    try:
        return True, ast.literal_eval(node)
    except Exception:  # noqa: BLE001 - not a literal, or nested past the recursion limit
        return False, None


def setting_type(value):
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "str"
    if isinstance(value, (list, tuple, set)):
        return "list"
    return None


# Calls whose arguments shape output, not the computation (FileReader.cosmetic).
CALL_NOISE_ROOTS = {"plt", "ax", "axs", "axes", "fig", "figure", "sns", "logging", "logger", "log", "warnings", "parser", "sys", "os", "time", "st", "print"}
CALL_NOISE = {"print", "exit", "quit", "sleep", "show", "title", "suptitle", "xlabel", "ylabel", "zlabel", "legend", "text", "annotate", "xlim", "ylim",
              "xticks", "yticks", "subplot", "subplots_adjust", "tight_layout", "grid", "axis", "colorbar", "figure", "imshow", "scatter", "hist", "bar",
              "barh", "fill_between", "contour", "contourf", "pcolormesh", "errorbar", "step", "format", "append", "extend", "insert", "pop", "update",
              "join", "sort", "assert_allclose", "assertEqual", "add_argument", "info", "debug", "warning", "error", "echo", "secho"}
# Keywords that say which axis an array operation works along (`torch.sum(x, dim=1)`): the data's shape, not a setting.
STRUCTURE_KEYWORDS = {"dim", "axis", "dims", "axes", "start_dim", "end_dim", "keepdim", "keepdims", "ndmin"}
# The name of a loop's count when its variable is `_`. Not `iterations`: that name would win an ask for
# "200 iterations" over the script's own max_iters (an exact name beats a synonym); the loop's help
# ("number of iterations of the loop at line N") still lets such an ask find it when nothing else fits.
LOOP_COUNT = "loop_count"
COMMENT_LINES = 3
CODING = re.compile(r"^#.*coding[:=]")


def is_code(text):
    """A commented-out statement (`x = 1`, `model.cuda()`, `import os`), not prose."""
    if not re.search(r"[=(]|^(import|from|return|print)\b", text):
        return False
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return bool(tree.body) and all(isinstance(s, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Import, ast.ImportFrom, ast.Return))
                                   or (isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)) for s in tree.body)


def part_about(text, name, names):
    """Of a comment on several names, the clause about `name`: the comment split at `;`, `,` and
    sentence ends, the clause that starts with the name (else the one that mentions it, when only one
    does); None when no clause speaks of it."""
    clauses = [c.strip(" .;,") for c in re.split(r";|,|\.\s+|\.$", text) if c.strip(" .;,")]
    word = re.compile(r"(?<![\w.])" + re.escape(name) + r"(?![\w])")
    starting = [c for c in clauses if re.match(re.escape(name) + r"(?![\w])", c)]
    if starting:
        return starting[0]
    mentioning = [c for c in clauses if word.search(c)]
    return mentioning[0] if len(mentioning) == 1 else None


def clip(text):
    if text is None:
        return None
    return text if len(text) <= MAX_DEFAULT else text[: MAX_DEFAULT - 1] + "…"


class FileReader:
    def __init__(self, text):
        global bom_shift
        bom_shift = 3 if text.startswith(BOM) else 0  # an editor's byte-order mark: ast.parse refuses it in a str
        text = text[1:] if bom_shift else text
        self.text = text
        # Lines as ast counts them (\r\n, \r or \n ends one), as UTF-8 bytes: ast's columns are byte offsets.
        # (ast.get_source_segment splits the whole text on every call: minutes on a long file.)
        parts = re.split(r"(\r\n|\r|\n)", text)
        self.lines = [parts[i].encode("utf-8") for i in range(0, len(parts), 2)]
        self.tree = ast.parse(text)
        self.parent = {}
        for node in ast.walk(self.tree):
            for child in ast.iter_child_nodes(node):
                self.parent[child] = node
        self.settings = []

    # --- helpers -------------------------------------------------------------------------------

    def segment(self, node):
        """The node's source text, exactly as written."""
        line, end = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
        if line is None or end is None or end > len(self.lines):
            return src(node)
        if line == end:
            raw = self.lines[line - 1][node.col_offset:node.end_col_offset]
        else:
            raw = b"\n".join([self.lines[line - 1][node.col_offset:], *self.lines[line:end - 1], self.lines[end - 1][:node.end_col_offset]])
        return raw.decode("utf-8", "replace")

    def default_text(self, node, value=None, have_value=False):
        """A default as written: strings unquoted, everything else as in the source."""
        if node is None:
            return None
        if have_value and isinstance(value, str):
            return clip(value)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return clip(node.value)
        if isinstance(node, ast.Constant) and node.value is None:
            return None
        return clip(self.segment(node))

    def trailing_comment(self, node):
        """The comment after a statement on its last line (its help text when it has one)."""
        end = getattr(node, "end_lineno", None)
        if not end or end > len(self.lines):
            return None
        rest = self.lines[end - 1][node.end_col_offset:].decode("utf-8", "replace")
        stripped = rest.strip().lstrip(";").strip()
        if stripped.startswith("#"):
            comment = stripped.lstrip("#").strip()
            return comment or None
        return None

    def comment_above(self, node):
        """The comment lines right above a statement (no blank line between), at most COMMENT_LINES of
        them: `# N is batch size; D_in is input dimension;` above `N, D_in = 64, 1000`. Rules of dashes
        and commented-out code (`# device = torch.device('cuda')`) are not help."""
        out = []
        i = getattr(node, "lineno", 1) - 2
        while i >= 0 and len(out) <= COMMENT_LINES:
            line = self.lines[i].decode("utf-8", "replace").strip()
            if not line.startswith("#") or line.startswith("#!") or CODING.match(line):
                break
            body = line.lstrip("#").strip()
            i -= 1
            if not re.search(r"\w", body):
                if out:
                    break  # a rule ends the block that belongs to this statement
                continue
            if is_code(body):
                break
            out.append(body)
        if len(out) > COMMENT_LINES:
            return None  # a paragraph narrating the code below, not a label of this statement
        return " ".join(reversed(out)) or None

    def comment_help(self, stmt, name=None, names=None):
        """A statement's help from its comments: the lines right above it, then its trailing comment.
        For one of several names bound together (`N, D_in, H = 64, 1000, 100`), the part of the
        comment that speaks of that name (`H is hidden dimension`), when one does."""
        above, trailing = self.comment_above(stmt), self.trailing_comment(stmt)
        if above and self.heads_group(stmt) and not any(re.search(r"(?<![\w.])" + re.escape(n) + r"(?![\w])", above) for n in (names or [name]) if n):
            above = None  # `# model` over n_layer, n_head, n_embd: a section's title, not the first one's help
        text = (above + (" " if above[-1] in ".;:!?" else "; ") + trailing if above and trailing else above or trailing) or None
        if text and name and names and len(names) > 1:
            return part_about(text, name, names) or text
        return text

    def heads_group(self, stmt):
        """An assignment with another assignment on the very next line (a group under one comment)."""
        container = self.parent.get(stmt)
        for field in ("body", "orelse", "finalbody"):
            body = getattr(container, field, None)
            if isinstance(body, list) and stmt in body:
                i = body.index(stmt)
                nxt = body[i + 1] if i + 1 < len(body) else None
                return isinstance(nxt, (ast.Assign, ast.AnnAssign)) and nxt.lineno == stmt.end_lineno + 1
        return False

    def add(self, **s):
        self.settings.append({k: v for k, v in s.items() if v is not None or k in ("default", "help", "type")})

    # --- command-line parsers -----------------------------------------------------------------------

    def cli_type(self, node, default_value=None, has_default=False):
        name = type_name(node)
        low = (name or "").lower()
        if low in ("int", "intrange"):
            return "int"
        if low in ("float", "floatrange"):
            return "float"
        if low in ("str", "path", "filetype", "file", "choice", "string"):
            return "str"
        if low == "bool" or "bool" in low:
            return "bool"
        if has_default and default_value is not None:
            return setting_type(default_value)
        return None

    def argparse(self, call, scope, position):
        names = strings(call.args)
        if not names:
            return position
        default = kw(call, "default")
        ok, dval = literal(default) if default is not None else (False, None)
        action = const(kw(call, "action"))
        nargs = const(kw(call, "nargs"))
        choices = kw(call, "choices")
        choice_list = [const(e) for e in choices.elts] if isinstance(choices, (ast.List, ast.Tuple, ast.Set)) else None
        typ = self.cli_type(kw(call, "type"), dval, ok)
        if action and action.split(".")[-1] in ("store_true", "store_false", "BooleanOptionalAction"):
            typ = "bool"
        elif action == "count":
            typ = "int"
        elif action in ("append", "extend") or (nargs in ("+", "*") or (nargs and nargs.isdigit() and int(nargs) > 1)):
            typ = "list"
        if default is None and action == "store_true":
            default_text = "False"
        elif default is None and action == "store_false":
            default_text = "True"
        else:
            default_text = self.default_text(default, dval, ok)
        help_text = const(kw(call, "help"))
        dest = const(kw(call, "dest"))
        if all(n.startswith("-") for n in names):
            longs = [n for n in names if n.startswith("--")]
            flag = longs[0] if longs else names[0]
            name = dest or flag.lstrip("-").replace("-", "_")
            self.add(kind="flag", name=name, flag=flag, aliases=[n for n in names if n != flag], type=typ, default=default_text,
                     help=help_text, choices=choice_list, nargs=nargs, action=action, scope=scope)
            return position
        self.add(kind="positional", name=names[0], position=position, type=typ, default=default_text, help=help_text,
                 choices=choice_list, nargs=nargs, action=action, scope=scope)
        return position + 1

    ABSL_TYPES = {"integer": "int", "float": "float", "string": "str", "boolean": "bool", "bool": "bool", "enum": "str", "list": "list",
                  "spaceseplist": "list", "multi_string": "list", "multi_integer": "list", "multi_float": "list", "multi_enum": "list"}

    def absl_flag(self, call, scope):
        """absl / tf.app flags: flags.DEFINE_integer("epochs", 10, "help") → --epochs."""
        kind = (type_name(call.func) or "")[len("DEFINE_"):]
        if kind not in self.ABSL_TYPES:
            return
        args = list(call.args)
        name = args[0] if args else kw(call, "name")
        if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
            return
        default = args[1] if len(args) > 1 else kw(call, "default")
        ok, dval = literal(default) if default is not None else (False, None)
        choices = None
        if kind in ("enum", "multi_enum"):
            values = args[2] if len(args) > 2 else kw(call, "enum_values")
            choices = [const(e) for e in values.elts] if isinstance(values, (ast.List, ast.Tuple)) else None
            help_node = args[3] if len(args) > 3 else kw(call, "help")
        else:
            help_node = args[2] if len(args) > 2 else kw(call, "help")
        default_text = self.default_text(default, dval, ok)
        if ok and isinstance(dval, bool):
            default_text = str(dval)
        self.add(kind="flag", name=name.value, flag="--" + name.value, aliases=[], type=self.ABSL_TYPES[kind], default=default_text,
                 help=const(help_node), choices=choices, scope=scope)

    def click_decorators(self, fn, scope):
        position = 0
        for d in fn.decorator_list:
            if not isinstance(d, ast.Call):
                continue
            attr = d.func.attr if isinstance(d.func, ast.Attribute) else getattr(d.func, "id", "")
            if attr not in ("option", "argument"):
                continue
            names = strings(d.args)
            default = kw(d, "default")
            ok, dval = literal(default) if default is not None else (False, None)
            typ_node = kw(d, "type")
            typ = self.cli_type(typ_node, dval, ok)
            choice_list = None
            if isinstance(typ_node, ast.Call) and type_name(typ_node.func) == "Choice" and typ_node.args and isinstance(typ_node.args[0], (ast.List, ast.Tuple)):
                choice_list = [const(e) for e in typ_node.args[0].elts]
                typ = "str"
            multiple = kw(d, "multiple")
            nargs = const(kw(d, "nargs"))
            if (isinstance(multiple, ast.Constant) and multiple.value is True) or (nargs and nargs not in ("1", "None")):
                typ = "list"
            if attr == "argument":
                if names:
                    self.add(kind="positional", name=names[0], position=position, type=typ, default=self.default_text(default, dval, ok),
                             help=None, choices=choice_list, nargs=nargs, scope=scope)
                    position += 1
                continue
            dashed = [n for n in names if n.startswith("-")]
            if not dashed:
                continue
            is_flag = kw(d, "is_flag")
            if (isinstance(is_flag, ast.Constant) and is_flag.value is True) or any("/" in n for n in dashed):
                typ = "bool"
            longs = [n.split("/")[0] for n in dashed if n.startswith("--")]
            flag = longs[0] if longs else dashed[0].split("/")[0]
            ident = [n for n in names if not n.startswith("-")]
            name = ident[0] if ident else flag.lstrip("-").replace("-", "_")
            default_text = self.default_text(default, dval, ok) if default is not None else ("False" if typ == "bool" else None)
            self.add(kind="flag", name=name, flag=flag, aliases=[n.split("/")[0] for n in dashed if n.split("/")[0] != flag], type=typ,
                     default=default_text, help=const(kw(d, "help")), choices=choice_list, nargs=nargs,
                     action="store_true" if typ == "bool" else None, scope=scope)

    def signature(self, fn, scope, style):
        """typer / fire: a function's parameters as the command line sees them."""
        args = [a for a in fn.args.posonlyargs + fn.args.args if a.arg not in ("self", "cls")]
        defaults = [None] * (len(fn.args.posonlyargs + fn.args.args) - len(fn.args.defaults)) + list(fn.args.defaults)
        defaults = defaults[len(fn.args.posonlyargs + fn.args.args) - len(args):]
        params = list(zip(args, defaults)) + list(zip(fn.args.kwonlyargs, fn.args.kw_defaults))
        position = 0
        for a, d in params:
            annotation = a.annotation
            marker = None  # typer.Option / typer.Argument
            if isinstance(annotation, ast.Subscript) and type_name(annotation.value) == "Annotated" and isinstance(annotation.slice, ast.Tuple):
                elts = annotation.slice.elts
                annotation = elts[0]
                marker = next((e for e in elts[1:] if isinstance(e, ast.Call) and type_name(e.func) in ("Option", "Argument")), None)
            if isinstance(d, ast.Call) and type_name(d.func) in ("Option", "Argument"):
                marker = d
                d = d.args[0] if d.args else kw(d, "default")
                if isinstance(d, ast.Constant) and d.value is Ellipsis:
                    d = None
            ok, dval = literal(d) if d is not None else (False, None)
            typ = self.cli_type(annotation, dval, ok)
            if isinstance(annotation, ast.Subscript) and type_name(annotation.value) in ("List", "list", "Tuple", "tuple", "Sequence", "Set", "set"):
                typ = "list"  # `--number 1 --number 2`
            help_text = const(kw(marker, "help")) if marker is not None else None
            is_argument = (marker is not None and type_name(marker.func) == "Argument") or (d is None and marker is None)
            if is_argument:
                self.add(kind="positional", name=a.arg, position=position, type=typ, default=self.default_text(d, dval, ok), help=help_text, scope=scope)
                position += 1
                continue
            flag = ("--" + a.arg.replace("_", "-")) if style == "typer" else "--" + a.arg
            if marker is not None:
                named = [n.split("/")[0] for n in strings(marker.args) if n.startswith("--")]
                if named:
                    flag = named[0]
            self.add(kind="flag", name=a.arg, flag=flag, aliases=[], type=typ, default=self.default_text(d, dval, ok), help=help_text,
                     action="store_true" if typ == "bool" and style == "typer" else None, scope=scope)

    # --- scopes ----------------------------------------------------------------------------------------

    @staticmethod
    def is_main_guard(stmt):
        t = getattr(stmt, "test", None)
        return isinstance(stmt, ast.If) and isinstance(t, ast.Compare) and isinstance(t.left, ast.Name) and t.left.id == "__name__"

    def scopes(self):
        """(scope name, statements) for the module, the main guard and the main function(s)."""
        body = self.tree.body
        guard = [s for s in body if self.is_main_guard(s)]
        guard_body = [x for g in guard for x in g.body]
        called = set()
        for s in guard_body:
            call = s.value if isinstance(s, (ast.Expr, ast.Assign)) else None
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Name):
                called.add(call.func.id)
        mains = [s for s in body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and (s.name == "main" or s.name in called)
                 and not CONFIG_FUNCTION.match(s.name)]  # a config function's settings are read by config_functions
        out = [("module", [s for s in body if not self.is_main_guard(s)])]
        if guard_body:
            out.append(("main-guard", guard_body))
        for fn in mains:
            out.append((fn.name + "()", fn.body))
        return out, mains

    def state_names(self, statements, module):
        """Names that hold state rather than a setting: augmented, loop or with targets, assigned again
        inside a block of the scope (`if …: device = 'cuda'`, a loop's `best = loss`), or declared
        `global` in a function. At module level the walk stays out of function bodies (their locals
        are theirs), except for `global`."""
        names = set()
        stack = [(s, False) for s in statements]
        while stack:
            node, nested = stack.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                if module:
                    names.update(n for g in ast.walk(node) if isinstance(g, ast.Global) for n in g.names)
                continue
            if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                names.add(node.target.id)
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
                names.update(n.id for n in ast.walk(node.target) if isinstance(n, ast.Name))
            elif isinstance(node, ast.withitem) and node.optional_vars is not None:
                names.update(n.id for n in ast.walk(node.optional_vars) if isinstance(n, ast.Name))
            elif nested and isinstance(node, (ast.Assign, ast.AnnAssign)):
                for t in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                    names.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
            elif isinstance(node, ast.NamedExpr):
                names.add(node.target.id)
            inside = nested or isinstance(node, BLOCKS)
            stack.extend((c, inside) for c in ast.iter_child_nodes(node))
        return names

    def configurator_line(self):
        """exec(open('configurator.py').read()) at module level: (file, line) or (None, None)."""
        for stmt in self.tree.body:
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and getattr(stmt.value.func, "id", "") == "exec":
                inner = stmt.value.args[0] if stmt.value.args else None
                opened = inner.func.value if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) else None
                if isinstance(opened, ast.Call) and getattr(opened.func, "id", "") == "open" and opened.args and isinstance(opened.args[0], ast.Constant):
                    return str(opened.args[0].value), stmt.lineno
        return None, None

    # --- constants ----------------------------------------------------------------------------------------

    @staticmethod
    def pure_arithmetic(node):
        """`5 * 8`, `2**10`, `-1e-3 / 4`: numbers and operators only (a configurator global's default)."""
        for n in ast.walk(node):
            if not isinstance(n, (ast.BinOp, ast.UnaryOp, ast.Constant, ast.operator, ast.unaryop)):
                return False
            if isinstance(n, ast.Constant) and type(n.value) not in (int, float):
                return False
        return isinstance(node, (ast.BinOp, ast.UnaryOp))

    def numbers_in(self, value):
        """Numeric literals inside an expression, with the keyword they are passed as (or None)."""
        out = []
        stack = [(value, None)]
        while stack:
            node, keyword = stack.pop()
            if isinstance(node, (ast.JoinedStr, ast.Lambda)):
                continue
            if isinstance(node, ast.Subscript):
                stack.append((node.value, keyword))  # the index is structure, not a setting
                continue
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) and is_number(node.right):
                stack.append((node.left, None))  # `dx**2`, `np.pi**2`: the power is the formula's, not a setting
                continue
            if is_number(node):
                out.append((node, keyword))
                continue
            if isinstance(node, ast.keyword):
                if node.arg not in STRUCTURE_KEYWORDS:
                    stack.append((node.value, node.arg))
                continue
            if isinstance(node, ast.Dict):
                # a string key names its value as a keyword does (`{"damping": 0.77}`); keys are not settings
                stack.extend((v, k.value if isinstance(k, ast.Constant) and isinstance(k.value, str) else None)
                             for k, v in reversed(list(zip(node.keys, node.values))))
                continue
            # the keyword names a literal passed as it (`lr=0.1`, `betas=(0.9, 0.95)`), not one inside arithmetic (`n=k + 1`)
            keep = keyword if isinstance(node, (ast.List, ast.Tuple)) else None
            stack.extend((c, keep) for c in reversed(list(ast.iter_child_nodes(node))))
        return out

    def in_dict(self, node):
        """A literal that is a dict's value (itself, or inside a literal list/tuple that is)."""
        p = self.parent.get(node)
        while isinstance(p, (ast.List, ast.Tuple)):
            node, p = p, self.parent.get(p)
        return isinstance(p, ast.Dict) and node in p.values

    def call_argument(self, node):
        """Passed to a call, directly or inside a literal list/tuple (`tensor([1.0, 2.0])`)."""
        p = self.parent.get(node)
        while isinstance(p, (ast.List, ast.Tuple)):
            node, p = p, self.parent.get(p)
        return isinstance(p, ast.keyword) or (isinstance(p, ast.Call) and node in p.args)

    def call_position(self, node):
        """For a literal passed positionally (itself, or inside a literal list/tuple): its index among the call's arguments."""
        p = self.parent.get(node)
        while isinstance(p, (ast.List, ast.Tuple)):
            node, p = p, self.parent.get(p)
        if isinstance(p, ast.Call) and node in p.args:
            return p.args.index(node)
        return None

    def argument_words(self, node):
        """`argument 2 of np.full`, or `an item of argument 1 of np.array` for a literal inside a list passed to it."""
        item = isinstance(self.parent.get(node), (ast.List, ast.Tuple))
        return ("an item of " if item else "") + f"argument {self.call_position(node) + 1} of {self.call_name(node)}"

    def call_name(self, node):
        """For a literal passed to a call: the call's function as written (`optim.Adam`)."""
        p = self.parent.get(node)
        while p is not None and isinstance(p, (ast.keyword, ast.List, ast.Tuple)):
            p = self.parent.get(p)
        return self.segment(p.func) if isinstance(p, ast.Call) else None

    def target_names(self, target):
        """`x` → "x"; `cfg.lr` → "cfg.lr"; `cfg["lr"]` → "cfg.lr"; others None."""
        if isinstance(target, ast.Name):
            return target.id
        if isinstance(target, ast.Attribute):
            base = self.target_names(target.value)
            return f"{base}.{target.attr}" if base else None
        if isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant) and isinstance(target.slice.value, str):
            base = self.target_names(target.value)
            return f"{base}.{target.slice.value}" if base else None
        return None

    def constants(self, scope, statements, state, kind, stop_line=None):
        """Literal assignments of one scope (last wins), then each numeric literal in other assignments."""
        found = {}  # name → [setting, ...]: a later literal replaces them; a later expression that does not read the name too
        numbered = []  # (name, settings) of each expression: every one of its literals is used, whatever comes later
        for stmt in statements:
            if stop_line is not None and stmt.lineno >= stop_line:
                break
            pairs = []
            if isinstance(stmt, ast.Assign):
                for t in stmt.targets:
                    if isinstance(t, (ast.Tuple, ast.List)) and isinstance(stmt.value, (ast.Tuple, ast.List)) and len(t.elts) == len(stmt.value.elts):
                        pairs.extend(zip(t.elts, stmt.value.elts))
                    elif isinstance(t, (ast.Tuple, ast.List)):
                        names = [self.target_names(e) for e in t.elts]
                        for n in names:
                            if n:
                                found.pop(n, None)  # unpacked from something computed: no longer the literal
                        if all(names) and not any(n.split(".")[0] in state or n.startswith("_") for n in names) and kind != "configurator":
                            # `X_train, X_test, … = train_test_split(X, y, test_size=0.5)`: its numbers, named for all targets
                            numbered.append(self.assignment(", ".join(names), stmt.value, stmt, self.comment_help(stmt), scope, "constant"))
                    else:
                        pairs.append((t, stmt.value))
            elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                pairs.append((stmt.target, stmt.value))
            elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and kind != "configurator":
                made = self.call_statement(stmt, scope)
                if made:
                    numbered.append(made)
                continue
            else:
                continue
            together = [n for n in (self.target_names(t) for t, _ in pairs) if n]
            for target, value in pairs:
                name = self.target_names(target)
                comment = self.comment_help(stmt, name, together)
                if not name or name.startswith("_") or (kind != "configurator" and name.split(".")[0] in state):
                    continue  # private names and state are not settings (a configurator global is one whatever the program does with it)
                if kind == "configurator" and (name.startswith("_") or "." in name):
                    continue
                made = self.assignment(name, value, stmt, comment, scope, kind)
                if made and made[0].get("inExpression"):
                    numbered.append(made)
                reads_itself = any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(value))
                if not (made and made[0].get("inExpression")) or not reads_itself:
                    # a literal replaces the earlier value; so does a computed one that does not read it (`model = None` … `model = Net()`)
                    found.pop(name, None)
                    for key in [k for k in found if k.startswith(name + ".")]:
                        found.pop(key)
                if made and not made[0].get("inExpression"):
                    found[name] = made
        for settings in found.values():
            self.settings.extend(settings)
        for settings in numbered:
            self.settings.extend(settings)
        if kind != "configurator":
            for stmt in self.literals_in_loops(statements):
                self.settings.extend(self.assignment(stmt.targets[0].id, stmt.value, stmt, self.comment_help(stmt), scope, kind))
            self.loops(scope, statements)

    def assignment(self, name, value, stmt, comment, scope, kind):
        ok, v = literal(value)
        out = []
        base = {"scope": scope, "help": comment}
        if ok and isinstance(v, dict) and isinstance(value, (ast.Dict,)):
            return self.dict_items(name, value, stmt, comment, scope, kind, 0)
        if ok and isinstance(v, (list, tuple, set, dict)) and not v:
            return []  # an empty container is filled by the program (`history = []`), not set by a user
        if ok and v is None and not isinstance(stmt.targets[0] if isinstance(stmt, ast.Assign) else stmt.target, ast.Name):
            return []  # `cache["x"] = None`: bookkeeping
        if ok and not (isinstance(v, str) and "\n" in v) and not isinstance(v, (bytes, complex, dict)):
            setting = dict(base, kind=kind, name=name, type=setting_type(v), default=self.default_text(value, v, True), span=span(value))
            if kind == "configurator":
                setting["flag"] = "--" + name
            return [setting]
        if isinstance(value, ast.Call) and type_name(value.func) == "dict" and not value.args and kind == "constant":
            return self.dict_items(name, ast.Dict(keys=[ast.Constant(k.arg) for k in value.keywords if k.arg],
                                                    values=[k.value for k in value.keywords if k.arg]), stmt, comment, scope, kind, 0)
        if self.pure_arithmetic(value) or (kind == "configurator" and isinstance(value, ast.IfExp) and all(literal(x)[0] for x in (value.body, value.orelse))):
            # `5 * 8`, `2**10`: one setting whose span is the whole expression (a rewrite writes the number)
            leaves = [n.value for n in ast.walk(value) if isinstance(n, ast.Constant)]
            typ = setting_type(leaves[0]) if isinstance(value, ast.IfExp) else ("float" if any(isinstance(x, float) for x in leaves) or any(isinstance(n, ast.Div) for n in ast.walk(value)) else "int")
            setting = dict(base, kind=kind, name=name, type=typ, default=clip(self.segment(value)), span=span(value))
            if kind == "configurator":
                setting["flag"] = "--" + name
            return [setting]
        expression = clip(self.segment(stmt))
        for node, keyword in self.numbers_in(value):
            ok, v = literal(node)
            if keyword is None and type(v) is int and v in (0, 1, -1):
                continue  # an index, offset, shape or identity (`x[i - 1]`, `Linear(n, 1)`, `1 - p`), not a setting
            if keyword is None and type(v) is float and v in (0.0, 1.0, -1.0) and not self.call_argument(node):
                continue  # an identity in arithmetic (`1.0 / (nx - 1)`, `x / 1.0`); passed to a call it may be a setting (`RBF(1.0)`)
            keyed = keyword is not None and self.in_dict(node)
            own = self.parent.get(node)
            while isinstance(own, (ast.keyword, ast.List, ast.Tuple)):
                own = self.parent.get(own)
            if isinstance(own, ast.Call) and self.cosmetic(own):
                continue  # `fig, ax = plt.subplots(1, 2, figsize=(10, 6))`: the figure's look, not a setting
            if scope != "module" and not self.call_argument(node) and not keyed:
                continue  # in a function, arithmetic (`4 * share`) is the algorithm; arguments (`randn(256, 3)`, `lr=0.1`) are settings
            help_text = comment
            callee = self.call_name(node) if keyword and not keyed else None
            if keyword and callee:
                # named by its keyword (`gamma` of `clf = svm.SVC(gamma=0.001)`); the variable stays in the help
                help_text = f"{keyword}= of {callee} in {name}" + (f"; {comment}" if comment else "")
            elif keyed:
                help_text = f'"{keyword}" of a dict in {name}' + (f"; {comment}" if comment else "")
            elif keyword is None and self.call_position(node) is not None:
                help_text = f"{self.argument_words(node)} in {name}" + (f"; {comment}" if comment else "")
            out.append(dict(base, kind="constant", name=keyword if keyword and (callee or keyed) else name, type=setting_type(v), default=self.segment(node),
                            span=span(node), expression=self.where_in(stmt, node, name, expression), help=help_text, inExpression=True))
        return out

    def literals_in_loops(self, statements):
        """`future = 1000` in a loop's (or a `with`'s) body, the name's only binding in the scope: the
        same value every time round, so a setting like one at the top. Not under an `if` (a value for
        one case), not a name bound anywhere else (state)."""
        bindings, found = {}, []
        stack = [(s, False, False) for s in statements]
        while stack:
            node, inside, conditional = stack.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)) or self.is_main_guard(node):
                continue
            for n in ([node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.comprehension, ast.NamedExpr)) else
                      node.targets if isinstance(node, ast.Assign) else [node.optional_vars] if isinstance(node, ast.withitem) and node.optional_vars else []):
                for name in (x.id for x in ast.walk(n) if isinstance(x, ast.Name)):
                    bindings[name] = bindings.get(name, 0) + 1
            if (inside and not conditional and isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                    and not node.targets[0].id.startswith("_")):
                ok, v = literal(node.value)
                if ok and v is not None and not isinstance(v, (bytes, complex, dict, list, tuple, set)) and not (isinstance(v, str) and "\n" in v):
                    found.append(node)
            loop = isinstance(node, (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith))
            branch = isinstance(node, BLOCKS) and not loop and not isinstance(node, ast.Try)
            stack.extend((c, inside or loop, conditional or branch) for c in ast.iter_child_nodes(node))
        return sorted((n for n in found if bindings.get(n.targets[0].id) == 1), key=lambda n: n.lineno)

    def call_statement(self, stmt, scope):
        """A call made for its effect (`torch.manual_seed(1337)`, `model.fit(X, y, epochs=10)`): the
        literals passed to it, each named by its keyword, else by the function (`manual_seed`).
        Not the arguments of output, plotting and exits: what a figure looks like or a message says
        is not a setting of the computation."""
        call = stmt.value
        if self.cosmetic(call):
            return []
        comment = self.comment_help(stmt)
        expression = clip(self.segment(stmt))
        out = []
        for node, keyword in self.numbers_in(call):
            ok, v = literal(node)
            if not (self.call_argument(node) or (keyword and self.in_dict(node))) or (keyword is None and type(v) is int and v in (0, 1, -1)):
                continue
            own = self.parent.get(node)
            while isinstance(own, (ast.keyword, ast.List, ast.Tuple)):
                own = self.parent.get(own)
            if isinstance(own, ast.Call) and self.cosmetic(own):
                continue
            name = keyword or (type_name(own.func) if isinstance(own, ast.Call) else None)
            if not name or not re.match(r"^[A-Za-z_]\w*$", name):
                continue
            where = f'"{keyword}" of a dict' if keyword and self.in_dict(node) else f"{keyword}= of {self.call_name(node)}" if keyword else self.argument_words(node)
            help_text = where + f" (line {stmt.lineno})"
            out.append({"scope": scope, "kind": "constant", "name": name, "type": setting_type(v), "default": self.segment(node), "span": span(node),
                        "expression": self.where_in(stmt, node, None, expression), "help": help_text + (f"; {comment}" if comment else ""), "inExpression": True})
        return out

    def where_in(self, stmt, node, name, whole):
        """The source a person reads to tell this literal from its neighbours: the statement when it is
        one line; in a longer one, the innermost one-line call around the literal (`classifiers = …
        DecisionTreeClassifier(max_depth=5) …`), else the literal's own line."""
        if stmt.lineno == stmt.end_lineno:
            return whole
        p = self.parent.get(node)
        while p is not None and p is not stmt and not (isinstance(p, ast.Call) and p.lineno == p.end_lineno):
            p = self.parent.get(p)
        part = self.segment(p) if isinstance(p, ast.Call) and p is not getattr(stmt, "value", None) else \
            self.lines[node.lineno - 1].decode("utf-8", "replace").strip().rstrip(",")
        return clip((f"{name} = … " if name else "… ") + part + " …")

    def cosmetic(self, call):
        """A call whose arguments shape output, not the computation: plotting (`plt.subplots(figsize=…)`,
        `ax.scatter(alpha=0.5)`), printing, logging, exits."""
        callee = self.segment(call.func) or ""
        last = type_name(call.func) or ""
        return callee.split(".")[0] in CALL_NOISE_ROOTS or last in CALL_NOISE or last.startswith(("set_", "add_", "plot", "print", "log", "save", "write"))

    def loops(self, scope, statements):
        """The count of a loop of this scope: `for t in range(500):` → the literal 500, named for the
        loop variable (`loop_count` for `_`); `while step < 500:` → 500, named for the variable. Loops
        inside functions and classes are theirs (their scope is read when it is a main)."""
        stack = list(statements)
        found = []
        while stack:
            node = stack.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)) or self.is_main_guard(node):
                continue
            if isinstance(node, ast.stmt):
                stack.extend(c for c in ast.iter_child_nodes(node) if isinstance(c, ast.stmt))
            if isinstance(node, (ast.For, ast.AsyncFor)):
                found.extend(self.for_count(node))
            elif isinstance(node, ast.While):
                found.extend(self.while_bound(node))
        for s in sorted(found, key=lambda s: (s["span"]["line"], s["span"]["col"])):
            self.settings.append(dict(s, scope=scope, kind="constant", inExpression=True))

    def for_count(self, loop):
        it = loop.iter
        if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range" and 1 <= len(it.args) <= 3 and not it.keywords):
            return []
        stop = it.args[0] if len(it.args) == 1 else it.args[1]
        ok, v = literal(stop) if is_number(stop) else (False, None)
        if not ok or type(v) is not int or v in (0, 1, -1):
            return []
        var = loop.target.id if isinstance(loop.target, ast.Name) else None
        name = var if var and not var.startswith("_") else LOOP_COUNT
        head = f"for {self.segment(loop.target)} in {self.segment(it)}:"
        if len(it.args) == 1:
            what = f"number of iterations of the loop at line {loop.lineno}"
        else:
            what = f"end of the range of the loop at line {loop.lineno} (its iterations run from {self.segment(it.args[0])})"
        comment = self.comment_help(loop)
        return [{"name": name, "type": "int", "default": self.segment(stop), "span": span(stop), "expression": head,
                 "help": what + (f"; {comment}" if comment else "")}]

    def while_bound(self, loop):
        t = loop.test
        if not (isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.NotEq))):
            return []
        left, right = t.left, t.comparators[0]
        var, bound = (left, right) if isinstance(left, ast.Name) and is_number(right) else (right, left) if isinstance(right, ast.Name) and is_number(left) else (None, None)
        if var is None:
            return []
        ok, v = literal(bound)
        if not ok or v in (0, 1, -1):
            return []
        counted = any(isinstance(n, ast.AugAssign) and isinstance(n.op, ast.Add) and isinstance(n.target, ast.Name) and n.target.id == var.id
                      and isinstance(n.value, ast.Constant) and n.value.value == 1 for st in loop.body for n in ast.walk(st))
        head = f"while {self.segment(t)}:"
        what = (f"number of iterations of the loop at line {loop.lineno}" if counted else f"bound of the loop at line {loop.lineno}") + f" ({head})"
        comment = self.comment_help(loop)
        return [{"name": var.id if not var.id.startswith("_") else LOOP_COUNT, "type": setting_type(v), "default": self.segment(bound),
                 "span": span(bound), "expression": head, "help": what + (f"; {comment}" if comment else "")}]

    def dict_items(self, name, node, stmt, comment, scope, kind, depth):
        out = []
        for k, v in zip(node.keys, node.values):
            if not (isinstance(k, ast.Constant) and isinstance(k.value, (str, int))):
                continue
            key = f"{name}.{k.value}"
            if isinstance(v, ast.Dict) and depth < MAX_DICT_DEPTH:
                out.extend(self.dict_items(key, v, stmt, comment, scope, kind, depth + 1))
                continue
            ok, val = literal(v)
            if ok and val is not None and not isinstance(val, (bytes, complex, dict)) and not (isinstance(val, str) and "\n" in val):
                out.append({"scope": scope, "help": comment, "kind": kind, "name": key, "type": setting_type(val),
                            "default": self.default_text(v, val, True), "span": span(v)})
        # a key written twice in one literal: the last one is the dict's value
        last = {}
        for s in out:
            last[s["name"]] = s
        return list(last.values())

    def argv_positionals(self, scope_of):
        """`n = int(sys.argv[1])`, `N = int(sys.argv[1]) if len(sys.argv) > 1 else 100`: a script's own
        positional arguments, named for the variable they are assigned to (else `argv[1]`)."""
        found = {}  # position → the first use assigned to a name, else the first use
        uses = sorted((n for n in ast.walk(self.tree) if isinstance(n, ast.Subscript)), key=lambda n: (n.lineno, n.col_offset))
        for node in uses:
            if not (isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and (self.segment(node.value) or "") in ("sys.argv", "argv")):
                continue
            index = node.slice
            if not (isinstance(index, ast.Constant) and type(index.value) is int and index.value >= 1):
                continue
            typ, default, name = None, None, None
            p, child = self.parent.get(node), node
            while p is not None and not isinstance(p, ast.stmt):
                if isinstance(p, ast.Call) and isinstance(p.func, ast.Name) and p.func.id in ("int", "float", "str", "bool") and typ is None:
                    typ = p.func.id
                if isinstance(p, ast.IfExp):
                    other = p.orelse if child is not p.orelse else p.body
                    ok, v = literal(other)
                    if ok:
                        default = self.default_text(other, v, True)
                        typ = typ or setting_type(v)
                p, child = self.parent.get(p), p
            if isinstance(p, (ast.Assign, ast.AnnAssign)):
                target = p.targets[0] if isinstance(p, ast.Assign) else p.target
                name = self.target_names(target)
            position = index.value - 1
            if position in found and (found[position]["name"] != f"argv[{index.value}]" or not name):
                continue
            found[position] = {"kind": "positional", "name": name or f"argv[{index.value}]", "position": position, "type": typ, "default": default,
                               "help": None, "scope": scope_of.get(node, "module")}
        self.settings.extend(found[k] for k in sorted(found))

    def config_functions(self):
        """Configs built in code, yacs / minGPT CfgNode / ml_collections style:

            def get_config():                      class Trainer:
                C = CN()                               @staticmethod
                C.system.seed = 3407                   def get_default_config():
                C.trainer = Trainer.get_default_config()   C = CN(); C.max_iters = None; return C
                C.trainer.learning_rate = 5e-4

        Each function named get_config / get_default_config / default_config / … (top level or a
        method of a top-level class) whose body makes a root object: its steps in order — a literal
        at a dotted path (with its span), or another config function included under a path. The
        caller (listSettings.ts) follows the includes across files; a later literal wins."""
        out = []
        for stmt in self.tree.body:
            fns = [(stmt.name, stmt, True)] if isinstance(stmt, ast.FunctionDef) else \
                [(f"{stmt.name}.{m.name}", m, False) for m in stmt.body if isinstance(m, ast.FunctionDef)] if isinstance(stmt, ast.ClassDef) else []
            for qual, fn, top in fns:
                if not CONFIG_FUNCTION.match(fn.name):
                    continue
                root, steps = None, []
                for st in fn.body:
                    if not (isinstance(st, ast.Assign) and len(st.targets) == 1):
                        continue
                    t, value = st.targets[0], st.value
                    if isinstance(t, ast.Name) and isinstance(value, ast.Call) and root is None:
                        root = t.id  # C = CN()
                        continue
                    name = self.target_names(t)
                    if not (root and name and name.startswith(root + ".")):
                        continue
                    path = name[len(root) + 1:]
                    if isinstance(value, ast.Call) and CONFIG_FUNCTION.match(type_name(value.func) or ""):
                        steps.append({"include": path, "callee": self.segment(value.func)})
                        continue
                    ok, v = literal(value)
                    if ok and not isinstance(v, (bytes, complex, dict)) and not (isinstance(v, str) and "\n" in v):
                        steps.append({"path": path, "type": setting_type(v), "default": self.default_text(value, v, True), "span": span(value),
                                      "help": self.comment_help(st), "line": st.lineno})
                if root and steps:
                    out.append({"name": qual, "topLevel": top, "steps": steps})
        return out

    CONFIG_CLASS_SUFFIXES = ("Config", "Args", "Arguments", "Params", "Hparams", "HParams", "Hyperparameters", "Settings", "Options")

    def config_classes(self, classes):
        """Fields of settings classes: a @dataclass, a pydantic model, or a class named *Config/*Args/… .
        Read by tyro.cli(C) (flags --field-name) or HfArgumentParser(C) (flags --field_name) they are
        flags; otherwise constants named `C.field` (changed by a rewrite of the default)."""
        cli = {}
        for node in ast.walk(self.tree):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            fn = type_name(node.func)
            style = "tyro" if fn == "cli" and (self.segment(node.func) or "").startswith("tyro") else "hf" if fn == "HfArgumentParser" else None
            if style:
                first = node.args[0]
                for n in (first.elts if isinstance(first, (ast.Tuple, ast.List)) else [first]):
                    if isinstance(n, ast.Name):
                        cli[n.id] = style
        for name, cls in classes.items():
            decorators = [self.segment(d) or "" for d in cls.decorator_list]
            bases = [self.segment(b) or "" for b in cls.bases]
            if not (any("dataclass" in d for d in decorators) or any(b.endswith(("BaseModel", "BaseSettings")) for b in bases)
                    or name.endswith(self.CONFIG_CLASS_SUFFIXES) or name in cli):
                continue
            for stmt in cls.body:
                target = stmt.target if isinstance(stmt, ast.AnnAssign) else stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else None
                value = stmt.value if isinstance(stmt, (ast.Assign, ast.AnnAssign)) else None
                if not isinstance(target, ast.Name) or target.id.startswith("_") or value is None:
                    continue
                if isinstance(value, ast.Call) and type_name(value.func) == "field":  # field(default=3)
                    value = kw(value, "default")
                    if value is None:
                        continue
                ok, v = literal(value)
                if not ok or isinstance(v, (bytes, complex, dict)) or (isinstance(v, str) and "\n" in v):
                    continue
                typ = self.cli_type(stmt.annotation, v, True) if isinstance(stmt, ast.AnnAssign) else setting_type(v)
                help_text = self.comment_help(stmt)
                if name in cli:
                    flag = "--" + (target.id.replace("_", "-") if cli[name] == "tyro" else target.id)
                    self.add(kind="flag", name=target.id, flag=flag, aliases=[], type=typ, default=self.default_text(value, v, True), help=help_text,
                             scope="class " + name)
                else:
                    self.add(kind="constant", name=f"{name}.{target.id}", type=typ, default=self.default_text(value, v, True), help=help_text,
                             span=span(value), scope="class " + name)

    # --- environment and config files ----------------------------------------------------------------

    def env_and_reads(self):
        envs = {}
        reads = []
        hydra = False
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Call):
                fn = self.segment(node.func) or ""
                if fn.endswith(("environ.get", "getenv", "environ.setdefault")) and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                    d = node.args[1] if len(node.args) > 1 else kw(node, "default")
                    self.env(envs, node.args[0].value, node, d)
                if isinstance(node.func, ast.Attribute) and node.func.attr == "main" and type_name(node.func.value) == "hydra":
                    hydra = True
                    path, name = const(kw(node, "config_path")), const(kw(node, "config_name"))
                    if name:
                        name = name if name.endswith((".yaml", ".yml")) else name + ".yaml"
                        reads.append({"path": f"{path.rstrip('/')}/{name}" if path else name, "line": node.lineno, "hydra": True})
            elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and (self.segment(node.value) or "").endswith("environ"):
                if isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
                    self.env(envs, node.slice.value, node, None)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) < 300 and "\n" not in node.value:
                path = self.config_path(node)
                if path:
                    reads.append({"path": path, "line": node.lineno, "hydra": False})
        self.settings.extend(envs.values())
        return reads, hydra

    def env(self, envs, name, node, default):
        ok, dval = literal(default) if default is not None else (False, None)
        typ = None
        p = self.parent.get(node)
        if isinstance(p, ast.Call) and isinstance(p.func, ast.Name) and p.func.id in ("int", "float", "bool", "str") and p.args and p.args[0] is node:
            typ = p.func.id
        elif ok and dval is not None:
            typ = setting_type(dval)
        setting = {"kind": "env", "name": name, "env": name, "type": typ, "default": self.default_text(default, dval, ok), "help": None}
        if name not in envs or (envs[name]["default"] is None and setting["default"] is not None):
            envs[name] = setting

    def config_path(self, node):
        """A literal config path the code reads (not one it writes), or None."""
        value = node.value
        p = self.parent.get(node)
        if isinstance(p, ast.Call) and node in p.args and (self.segment(p.func) or "").endswith("path.join"):
            parts = [a.value for a in p.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            if len(parts) != len(p.args) or node is not p.args[-1]:
                return None
            value, node, p = "/".join(parts), p, self.parent.get(p)
        if not value.lower().endswith(CONFIG_EXTS) or any(c in value for c in "*?{}<>|"):
            return None
        if isinstance(p, ast.keyword):
            p = self.parent.get(p)
        if isinstance(p, ast.Call):
            fn = p.func.attr if isinstance(p.func, ast.Attribute) else getattr(p.func, "id", "")
            if fn in WRITE_CALLS:
                return None
            if fn == "open":
                mode = p.args[1] if len(p.args) > 1 else kw(p, "mode")
                if isinstance(mode, ast.Constant) and isinstance(mode.value, str) and any(c in mode.value for c in "wax+"):
                    return None
            if fn == "add_argument" and any(w in " ".join(strings(p.args)).lower() for w in ("out", "save", "dump", "result", "log")):
                return None  # a flag naming where results go
        return value

    # --- the file ------------------------------------------------------------------------------------------

    def read(self):
        scopes, mains = self.scopes()
        configurator, exec_line = self.configurator_line()
        for name, statements in scopes:
            module = name in ("module", "main-guard")
            state = self.state_names(statements, module)
            if name == "module" and exec_line is not None:
                self.constants(name, statements, state, "configurator", stop_line=exec_line)
                self.constants(name, [s for s in statements if s.lineno > exec_line], state, "constant")
            else:
                self.constants(name, statements, state, "constant")
        # command lines: argparse anywhere, click/typer decorators, typer.run / fire.Fire targets
        scope_of = {}
        for s in self.tree.body:
            where = "main-guard" if self.is_main_guard(s) else (s.name + "()" if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) else
                                                                 s.name if isinstance(s, ast.ClassDef) else "module")
            for n in ast.walk(s):
                scope_of[n] = where
        functions = {s.name: s for s in self.tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
        classes = {s.name: s for s in self.tree.body if isinstance(s, ast.ClassDef)}
        uses_typer = any(isinstance(n, (ast.Import, ast.ImportFrom)) and "typer" in (getattr(n, "module", None) or "") + " ".join(a.name for a in n.names)
                         for n in ast.walk(self.tree))
        position = 0
        typer_commands, fire_targets = [], []
        adds = sorted((n for n in ast.walk(self.tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "add_argument"),
                      key=lambda n: (n.lineno, n.col_offset))
        for node in adds:
            position = self.argparse(node, scope_of.get(node, "module"), position)
        for node in sorted((n for n in ast.walk(self.tree) if isinstance(n, ast.Call) and (type_name(n.func) or "").startswith("DEFINE_")),
                           key=lambda n: (n.lineno, n.col_offset)):
            self.absl_flag(node, scope_of.get(node, "module"))
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Call) and type_name(node.func) == "run" and (self.segment(node.func) or "").startswith("typer") and node.args and isinstance(node.args[0], ast.Name):
                typer_commands.append(node.args[0].id)
            elif isinstance(node, ast.Call) and type_name(node.func) == "Fire" and node.args and isinstance(node.args[0], ast.Name):
                fire_targets.append(node.args[0].id)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                attrs = [type_name(d.func if isinstance(d, ast.Call) else d) for d in node.decorator_list]
                if "option" in attrs or "argument" in attrs:
                    if not uses_typer or "command" not in attrs:
                        self.click_decorators(node, node.name + "()")
                        continue
                if uses_typer and ("command" in attrs or "callback" in attrs):
                    typer_commands.append(node.name)
        for name in dict.fromkeys(typer_commands):
            if name in functions:
                self.signature(functions[name], name + "()", "typer")
        for name in dict.fromkeys(fire_targets):
            target = functions.get(name)
            if target is None and name in classes:
                target = next((s for s in classes[name].body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
            if target is not None:
                self.signature(target, name + "()", "fire")
        self.config_classes(classes)
        if not any(x["kind"] == "positional" for x in self.settings):
            self.argv_positionals(scope_of)
        reads, _ = self.env_and_reads()
        imports = []
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                imports.extend({"module": a.name, "level": 0, "names": []} for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                imports.append({"module": node.module, "level": node.level, "names": [a.name for a in node.names]})
        config_shaped = bool(self.tree.body) and all(
            isinstance(s, (ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign, ast.Pass)) or (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
            for s in self.tree.body)
        from_cli = any(isinstance(n, ast.Attribute) and n.attr == "from_cli" for n in ast.walk(self.tree))
        merges_args = any(isinstance(n, ast.Attribute) and n.attr == "merge_from_args" for n in ast.walk(self.tree))
        return {"ok": True, "settings": self.settings, "reads": reads, "imports": imports, "configurator": configurator,
                "configShaped": config_shaped, "mains": [f.name + "()" for f in mains], "mainGuard": any(self.is_main_guard(s) for s in self.tree.body), "fromCli": from_cli,
                "configFunctions": self.config_functions(), "mergesArgs": merges_args}


MAGIC_LINE = re.compile(r"^\s*(%|!|\?)")
PYTHON_CELL_MAGICS = {"time", "timeit", "capture", "prun"}


def notebook_cells(text):
    """A notebook's cells that can hold settings: [(number among all cells, 1-based; its Python with
    IPython magics and shell lines blanked, line numbers kept)]. The one tagged `parameters`
    (papermill's convention) alone when there is one; else every code cell, in order (a cell that is
    a non-Python cell magic such as %%bash is left out)."""
    nb = json.loads(text)
    cells = nb.get("cells") if isinstance(nb, dict) else None
    if not isinstance(cells, list):
        raise ValueError("not a notebook: no cells")
    code = [(i, c) for i, c in enumerate(cells) if isinstance(c, dict) and c.get("cell_type") == "code"]
    tagged = [(i, c) for i, c in code if "parameters" in ((c.get("metadata") or {}).get("tags") or [])]
    out = []
    for i, cell in tagged[:1] or code:
        source = cell.get("source") or ""
        lines = ("".join(source) if isinstance(source, list) else str(source)).split("\n")
        first = lines[0].strip()
        if first.startswith("%%"):
            if (first[2:].split() or [""])[0] not in PYTHON_CELL_MAGICS:
                continue
            lines[0] = ""
        out.append((i + 1, "\n".join("" if MAGIC_LINE.match(l) else l for l in lines)))
    return out


def top_level_names(tree):
    """(names a module's top level assigns in any way, names it assigns a literal-shaped value to
    alone: `lr = 0.1`, `lr: float = 0.1`, `a, b = 1, 2` — the only ones chatgpu.notebook can set)."""
    assigned, settable = set(), set()
    for stmt in tree.body:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) else []
        for t in targets:
            for n in ast.walk(t):
                if isinstance(n, ast.Name):
                    assigned.add(n.id)
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            settable.add(stmt.target.id)
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            t = stmt.targets[0]
            if isinstance(t, ast.Name):
                settable.add(t.id)
            elif isinstance(t, (ast.Tuple, ast.List)) and isinstance(stmt.value, (ast.Tuple, ast.List)) and len(t.elts) == len(stmt.value.elts):
                settable.update(e.id for e in t.elts if isinstance(e, ast.Name))
    return assigned, settable


def read_notebook(text):
    """The settings of a notebook (notebook_cells): the names a cell's top level assigns a literal
    to, where `python -m chatgpu.notebook --set NAME=VALUE` rewrites them — the parameters cell's
    alone when there is one, else those of every code cell. A name that the top level of more than
    one cell assigns is not a setting: the runner rewrites the first, and the other one would undo
    it. A cell that does not parse (IPython-only syntax) is skipped. Each setting says its `cell`;
    the other facts are the first cell's."""
    empty = {"ok": True, "settings": [], "reads": [], "imports": [], "configurator": None, "configShaped": False, "mains": [],
             "mainGuard": False, "fromCli": False, "configFunctions": [], "mergesArgs": False, "cell": None}
    out = None
    found = []  # (cell number, settings of that cell)
    cells_assigning = {}
    for number, source in notebook_cells(text):
        try:
            reader = FileReader(source)
            facts = reader.read()
        except SyntaxError:
            continue
        if out is None:
            out = facts
        assigned, settable = top_level_names(reader.tree)
        for name in assigned:
            cells_assigning[name] = cells_assigning.get(name, 0) + 1
        mine = [dict(x, cell=number) for x in facts["settings"]
                if x["kind"] == "constant" and x.get("scope") == "module" and not x.get("inExpression") and x["name"] in settable]
        found.append((number, mine))
    if out is None:
        return empty
    settings = [x for _, mine in found for x in mine if cells_assigning.get(x["name"]) == 1]
    out["settings"] = settings
    out["cell"] = settings[0]["cell"] if settings else found[0][0]
    return out


def main():
    # A short-lived process over trees of many small objects: the cyclic collector only costs time here.
    gc.disable()
    started = time.monotonic()
    request = json.load(sys.stdin)
    limit = request.get("maxChars") or 500_000
    budget = request.get("budgetSeconds") or 20
    out = {}
    for path, text in request["files"].items():
        if out and time.monotonic() - started > budget:
            # the files read so far still come back; the caller's hard limit is a little longer than this budget
            out[path] = {"ok": False, "error": f"not read: the reader's time budget ({budget} s) was spent on other files"}
            continue
        if len(text) > limit:
            out[path] = {"ok": False, "error": f"too large to read for settings ({len(text)} characters; the limit is {limit})"}
            continue
        try:
            out[path] = read_notebook(text) if path.endswith(".ipynb") else FileReader(text).read()
        except SyntaxError as e:
            out[path] = {"ok": False, "error": f"SyntaxError: {e.msg} (line {e.lineno})"}
        except RecursionError:
            out[path] = {"ok": False, "error": "nested too deeply to read"}
        except (ValueError, AttributeError) as e:  # a notebook that is not JSON of nbformat's shape
            out[path] = {"ok": False, "error": f"not a notebook that can be read: {e}"}
        except Exception as e:  # noqa: BLE001 - one unreadable file must not hide the others
            out[path] = {"ok": False, "error": f"{type(e).__name__}: {e}"}
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
