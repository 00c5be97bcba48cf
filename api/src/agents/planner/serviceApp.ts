/**
 * "Give me an endpoint" / "serve this model as an API": the builtin planner's reading of a
 * project as an HTTP app (pure; the same sources give the same answer). It recognizes
 *   - a script that listens on $PORT itself (http.server, Flask's app.run, uvicorn.run, …):
 *     started as `python FILE`;
 *   - a Flask app object (`app = Flask(__name__)`) that does not read $PORT: started with
 *     Flask's own server, `python -m flask --app MODULE:app run --host 127.0.0.1 --port $PORT`
 *     (`--app MODULE` for an app factory `create_app`, which Flask calls itself);
 *   - a FastAPI app object: `python -m uvicorn MODULE:app --host 127.0.0.1 --port $PORT`.
 * The servers a start command needs (flask, uvicorn) are dependencies like any import.
 */
export const ENDPOINT_REQUEST = /\b(endpoint|api\b|serve\b|serving|host (it|this|the)|web ?service|http service|server)\b/i;

export interface ServiceApp {
  file: string;
  command: string;
  framework: 'script' | 'flask' | 'fastapi';
  /** Python modules the start command needs besides the app's own imports. */
  servers: string[];
  readinessPath: string;
}

const READS_PORT = /environ(?:\.get)?\s*[([]\s*['"]PORT['"]|getenv\(\s*['"]PORT['"]/;

/** The app to serve among `sources` (path → text), or null with the reason. */
export function findServiceApp(sources: Map<string, string>): { app: ServiceApp } | { reason: string } {
  const found: ServiceApp[] = [];
  for (const [file, text] of [...sources].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (!file.endsWith('.py')) continue;
    // A package's __init__.py is imported as the package (`app/__init__.py` → `app`), not as `app.__init__` (a second copy of the module).
    const module = file
      .replace(/(^|\/)__init__\.py$/, '')
      .replace(/\.py$/, '')
      .replace(/\//g, '.');
    const health = /['"](\/(?:healthz?|ready|readyz|ping|status))['"]/.exec(text)?.[1] ?? '/';
    const flask = /\b(\w+)\s*=\s*Flask\(/.exec(text);
    const fastapi = /\b(\w+)\s*=\s*FastAPI\(/.exec(text);
    if (READS_PORT.test(text) && /__main__|serve_forever|\.run\(|uvicorn\.run/.test(text)) {
      found.push({
        file,
        command: `python ${file}`,
        framework: flask ? 'flask' : fastapi ? 'fastapi' : 'script',
        servers: [],
        readinessPath: health,
      });
    } else if (flask) {
      // An app made inside a factory (`def create_app(): app = Flask(…)`) has no module-level
      // object: Flask finds a factory named create_app or make_app itself; another is called.
      const topLevel = /^(\w+)\s*=\s*Flask\(/m.exec(text);
      const factory = topLevel ? null : /^def\s+(\w+)\s*\(([^)]*)\)[^\n]*:\n(?:(?:[ \t][^\n]*|)\n)*?[ \t]+\w+\s*=\s*Flask\(/m.exec(text);
      const spec = factory
        ? /^(create_app|make_app)$/.test(factory[1]!)
          ? module
          : `"${module}:${factory[1]}()"`
        : `${module}:${flask[1]}`;
      found.push({
        file,
        command: `python -m flask --app ${spec} run --host 127.0.0.1 --port "$PORT"`,
        framework: 'flask',
        servers: ['flask'],
        readinessPath: health,
      });
    } else if (fastapi) {
      found.push({
        file,
        command: `python -m uvicorn ${module}:${fastapi[1]} --host 127.0.0.1 --port "$PORT"`,
        framework: 'fastapi',
        servers: ['uvicorn'],
        readinessPath: health,
      });
    }
  }
  if (found.length === 1) return { app: found[0]! };
  if (found.length === 0) {
    return {
      reason:
        'You asked for an endpoint, but no file here is an HTTP app the worker can start: a script that listens on the port in $PORT (e.g. http.server with int(os.environ["PORT"])), a Flask app (app = Flask(__name__)) or a FastAPI app (app = FastAPI()).',
    };
  }
  return { reason: `Several files could be the app to serve (${found.map((f) => f.file).join(', ')}); say which one in the request.` };
}

/** "for 2 hours" / "for 30 minutes" → seconds; null: until stopped. */
export function requestedDuration(request: string): number | null {
  const m = /\bfor\s+(\d+(?:\.\d+)?)\s*(minutes?|mins?|hours?|h|days?)\b/i.exec(request);
  if (!m) return null;
  const n = Number(m[1]);
  const unit = m[2]!.toLowerCase();
  const sec = unit.startsWith('m') ? n * 60 : unit.startsWith('d') ? n * 86400 : n * 3600;
  return Math.max(60, Math.round(sec));
}
