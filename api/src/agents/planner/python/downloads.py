"""Data downloads of one Python file, read with `ast` (used by entrypoints.py): calls that fetch
over the network — urllib (urlopen, urlretrieve), requests/httpx, wget/curl (as a module or a
command), `torchvision.datasets.X(download=True)`, `datasets.load_dataset`, huggingface_hub
(hf_hub_download, snapshot_download), torch.hub's *_from_url, gdown, download_url, pandas/NumPy
readers given a URL — and the URLs
written in the code (string constants, f-strings' literal heads; never docstrings or help texts).

A file is a downloader only when it has such a call: a URL in a comment, a docstring, a help text
or a README link is not a download, nor is `download=False` or a call on a local path.

Each call: {"line": N, "kind": "urllib"|"requests"|"wget"|"curl"|"torchvision"|"datasets"|
"huggingface_hub"|"torch.hub"|"gdown", "call": "source", "replay": "python code"|null,
"root": "folder"|null}. `replay` is set for a torchvision dataset whose arguments are all literals:
the call itself, with the module's full name, which a separate step can run to fetch the data
before a run that has no network (the dataset then finds its files and downloads nothing).
"""
import ast

URL_PREFIXES = ("http://", "https://", "ftp://")
# The last name of a call → the kind of download (any receiver: `urllib.request.urlopen`, `urlopen`).
CALLS = {
    "urlopen": "urllib",
    "urlretrieve": "urllib",
    "hf_hub_download": "huggingface_hub",
    "snapshot_download": "huggingface_hub",
    "load_dataset": "datasets",
    "load_state_dict_from_url": "torch.hub",
    "download_url_to_file": "torch.hub",
    "download_url": "torchvision",
    "download_and_extract_archive": "torchvision",
}
HTTP_CLIENTS = {"requests", "httpx"}
HTTP_METHODS = {"get", "post", "request", "stream", "head"}
SHELL_FETCHERS = ("wget", "curl")


def dotted(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    if isinstance(node, ast.Call):  # requests.Session().get → Session().get
        inner = dotted(node.func)
        return ".".join([inner + "()"] + list(reversed(parts))) if inner else None
    return None


def aliases(tree):
    """Local name → full module path, from the file's imports."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                out[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                out[a.asname or a.name] = f"{node.module}.{a.name}"
    return out


def resolve(name, names):
    if not name:
        return None
    head, _, rest = name.partition(".")
    full = names.get(head, head)
    return f"{full}.{rest}" if rest else full


def literal(node):
    try:
        ast.literal_eval(node)
        return True
    except Exception:  # noqa: BLE001 - anything not a literal
        return False


def shell_words(call):
    """The words of a command a call runs: subprocess.run(["wget", URL]), os.system("curl -O URL")."""
    if not call.args:
        return []
    a = call.args[0]
    if isinstance(a, (ast.List, ast.Tuple)):
        return [e.value for e in a.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    if isinstance(a, ast.Constant) and isinstance(a.value, str):
        return a.value.split()
    if isinstance(a, ast.JoinedStr):
        return "".join(v.value for v in a.values if isinstance(v, ast.Constant) and isinstance(v.value, str)).split()
    return []


def classify(call, names):
    """(kind, replay, root) when `call` downloads, else None."""
    name = dotted(call.func)
    full = resolve(name, names) or ""
    last = full.rsplit(".", 1)[-1]
    download_kw = next((k.value for k in call.keywords if k.arg == "download"), None)
    if isinstance(download_kw, ast.Constant) and download_kw.value is True:
        if full.startswith("torchvision.datasets."):
            replay = None
            root = None
            # What shapes the samples (transforms) plays no part in fetching them: left out of the replay.
            kws = [k for k in call.keywords if k.arg and k.arg not in ("transform", "target_transform", "transforms", "loader")]
            if all(literal(a) for a in call.args) and all(literal(k.value) for k in kws) and len(kws) == len([k for k in kws if k.arg]):
                args = [ast.unparse(a) for a in call.args] + [f"{k.arg}={ast.unparse(k.value)}" for k in kws]
                replay = f"import torchvision; {full}({', '.join(args)})"
                r = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "root"), None)
                root = r.value if isinstance(r, ast.Constant) and isinstance(r.value, str) else None
            return "torchvision", replay, root
        head = full.split(".")[0]
        return head if head in ("torchvision", "torchaudio", "torchtext") else "other", None, None
    if last in CALLS:
        kind = CALLS[last]
        # A local path is not a download: load_dataset("csv", data_files=…) and load_dataset("./data") read files.
        if last == "load_dataset" and call.args and isinstance(call.args[0], ast.Constant):
            first = str(call.args[0].value)
            if first in ("csv", "json", "text", "parquet", "imagefolder", "audiofolder") or first.startswith((".", "/")):
                return None
        if last == "urlopen" or last == "urlretrieve":
            a = call.args[0] if call.args else None
            if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith("file:"):
                return None
        return kind, None, None
    head = full.split(".")[0]
    # pandas and NumPy read a URL as a file: pd.read_csv("https://…").
    if last in ("read_csv", "read_json", "read_parquet", "read_table", "read_excel", "loadtxt", "genfromtxt") and call.args:
        a = call.args[0]
        if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith(URL_PREFIXES):
            return "pandas" if last.startswith("read_") else "numpy", None, None
    if head in HTTP_CLIENTS and last in HTTP_METHODS:
        return "requests", None, None
    if full in ("wget.download",) or (head == "wget" and last == "download"):
        return "wget", None, None
    if head == "gdown" and last in ("download", "download_folder", "cached_download"):
        return "gdown", None, None
    if full in ("os.system", "subprocess.run", "subprocess.call", "subprocess.check_call", "subprocess.check_output", "subprocess.Popen"):
        words = shell_words(call)
        for w in words:
            if w in SHELL_FETCHERS or w.endswith(("/wget", "/curl")):
                return w.rsplit("/", 1)[-1], None, None
    return None


def docstring_nodes(tree):
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                out.add(id(first.value))
    return out


def help_nodes(tree):
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            for k in node.keywords:
                if k.arg in ("help", "description", "epilog"):
                    for sub in ast.walk(k.value):
                        out.add(id(sub))
    return out


def urls_of(tree):
    skip = docstring_nodes(tree) | help_nodes(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            for word in node.value.split():
                if word.startswith(URL_PREFIXES) and len(word) > 10:
                    found.append((node.lineno, node.col_offset, word.rstrip(".,;)'\"")))
    # In the order the file writes them (ast.walk is breadth-first), each once.
    seen, out = set(), []
    for _, _, u in sorted(found):
        if u not in seen:
            seen.add(u)
            out.append(u)
    return out


def downloads(tree):
    """{"calls": [...], "urls": [...]} of a file, or None when it downloads nothing."""
    names = aliases(tree)
    calls = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            found = classify(node, names)
            if found:
                kind, replay, root = found
                calls.append({"line": node.lineno, "kind": kind, "call": (ast.unparse(node) or "")[:300], "replay": replay, "root": root})
    if not calls:
        return None
    calls.sort(key=lambda c: c["line"])
    return {"calls": calls, "urls": urls_of(tree)[:20]}
