/**
 * The builtin planner's reading of a project as an HTTP app (serviceApp.ts), on projects of
 * the shapes found in public repositories — the regression fixtures of a real run:
 * nobody6501/pythonanywhere@1658647c (a Flask app object in a package's app/__init__.py that
 * calls app.run() without reading $PORT, beside a routes.py that imports nothing runnable).
 * Pure: no Flask is needed to plan.
 */
import { describe, expect, it } from 'vitest';
import { findServiceApp, requestedDuration } from './serviceApp.js';

const FLASK_IN_PACKAGE = `
# A very simple Flask Hello World app

from flask import Flask
import os

app = Flask(__name__)


@app.route('/')
def hello_world():
    return 'Hello from Flask!'

if __name__ == '__main__':
    app.run(debug=True)
`;

describe('findServiceApp', () => {
  it("a Flask app object in a package's __init__.py is started as the package (not pkg.__init__), with Flask's server on $PORT", () => {
    const found = findServiceApp(
      new Map([
        ['app/__init__.py', FLASK_IN_PACKAGE],
        ['app/routes.py', 'from flask import jsonify, request, abort\nfrom models import Doctor\n'],
        ['app/models.py', 'from flask_sqlalchemy import SQLAlchemy\ndb = SQLAlchemy()\n'],
      ]),
    );
    expect(found).toEqual({
      app: {
        file: 'app/__init__.py',
        command: 'python -m flask --app app:app run --host 127.0.0.1 --port "$PORT"',
        framework: 'flask',
        servers: ['flask'],
        readinessPath: '/',
      },
    });
  });

  it('a module in a folder is imported by its dotted path; a FastAPI app gets uvicorn; a health route becomes the readiness path', () => {
    expect(
      findServiceApp(
        new Map([['web/api.py', "from fastapi import FastAPI\napi = FastAPI()\n@api.get('/healthz')\ndef h():\n    return 'ok'\n"]]),
      ),
    ).toEqual({
      app: {
        file: 'web/api.py',
        command: 'python -m uvicorn web.api:api --host 127.0.0.1 --port "$PORT"',
        framework: 'fastapi',
        servers: ['uvicorn'],
        readinessPath: '/healthz',
      },
    });
  });

  it('an app made inside a factory: the package when the factory is create_app/make_app (Flask calls it), else the factory called', () => {
    const factory = (name: string) =>
      `import os\nfrom flask import Flask\n\n\ndef ${name}(test_config=None):\n    """Make the app."""\n\n    app = Flask(__name__, instance_relative_config=True)\n    return app\n`;
    expect(findServiceApp(new Map([['flaskr/__init__.py', factory('create_app')]]))).toMatchObject({
      app: { command: 'python -m flask --app flaskr run --host 127.0.0.1 --port "$PORT"' },
    });
    expect(findServiceApp(new Map([['site/web.py', factory('build')]]))).toMatchObject({
      app: { command: 'python -m flask --app "site.web:build()" run --host 127.0.0.1 --port "$PORT"' },
    });
  });

  it('a script that listens on $PORT itself is run as it is', () => {
    const script =
      'import os\nfrom http.server import ThreadingHTTPServer, BaseHTTPRequestHandler\nThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), BaseHTTPRequestHandler).serve_forever()\n';
    expect(findServiceApp(new Map([['serve.py', script]]))).toEqual({
      app: { file: 'serve.py', command: 'python serve.py', framework: 'script', servers: [], readinessPath: '/' },
    });
  });

  it('says why when there is no app, or several', () => {
    expect(findServiceApp(new Map([['train.py', 'print(1)\n']]))).toEqual({
      reason: expect.stringMatching(/^You asked for an endpoint, but no file here is an HTTP app/),
    });
    const two = findServiceApp(
      new Map([
        ['a.py', 'from flask import Flask\napp = Flask(__name__)\n'],
        ['b.py', 'from flask import Flask\napp = Flask(__name__)\n'],
      ]),
    );
    expect(two).toEqual({ reason: 'Several files could be the app to serve (a.py, b.py); say which one in the request.' });
  });

  it('reads how long to serve from the request', () => {
    expect(requestedDuration('serve it for 2 hours')).toBe(7200);
    expect(requestedDuration('give me an endpoint')).toBeNull();
  });
});
