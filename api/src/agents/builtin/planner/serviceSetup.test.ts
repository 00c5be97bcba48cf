/**
 * The builtin planner's services rule, README part (serviceSetup.ts): the Flask tutorial's
 * shape (pallets/flask examples/tutorial: an app factory in flaskr/__init__.py, `init-db` in
 * flaskr/db.py, README.rst `flask --app flaskr init-db` then `flask --app flaskr run`), a
 * project without README setup, and setup asks honoured or refused.
 */
import { describe, expect, it } from 'vitest';
import { servicePlanParts, serviceDocs, withSetupSteps } from './serviceSetup.js';
import { parseAsks } from '../../planner/asks/parseAsks.js';
import type { AskDisposition } from '../../../domain/jobs/planSchema.js';

const INIT = `import os
from flask import Flask


def create_app(test_config=None):
    app = Flask(__name__, instance_relative_config=True)
    app.config.from_mapping(DATABASE=os.path.join(app.instance_path, "flaskr.sqlite"))
    os.makedirs(app.instance_path, exist_ok=True)
    from . import db
    db.init_app(app)
    return app
`;
const DB = `import click, sqlite3
from flask import current_app


@click.command("init-db")
def init_db_command():
    sqlite3.connect(current_app.config["DATABASE"]).executescript("create table post (title text);")
`;
const README = 'Run\n---\n\n::\n\n    $ flask --app flaskr init-db\n    $ flask --app flaskr run --debug\n';
const flaskr = (readme: string | null) =>
  new Map([['flaskr/__init__.py', INIT], ['flaskr/db.py', DB], ...(readme === null ? [] : [['README.rst', readme] as [string, string]])]);

/** What serviceAsks gives a setup ask before this rule decides it. */
const undecided = (request: string): AskDisposition[] =>
  parseAsks(request).map((a) => ({ ask: a.text, kind: a.kind, status: 'refused', detail: 'not decided' }));

describe('servicePlanParts', () => {
  it("flaskr: the README's app spec on $PORT (not flaskr:app, which has no module-level app) and its init-db step producing the instance folder's database", () => {
    const parts = servicePlanParts(flaskr(README), 'give me an endpoint; initialise the database first');
    expect(parts).toEqual({
      app: {
        file: 'flaskr/__init__.py',
        command: 'python -m flask --app flaskr run --host 127.0.0.1 --port "$PORT"',
        framework: 'flask',
        servers: ['flask'],
        readinessPath: '/',
      },
      before: [{ name: 'init-db', command: 'flask --app flaskr init-db', produces: ['instance/flaskr.sqlite'] }],
      specFrom: 'README.rst line 7',
      stepsFrom: { 'init-db': 'README.rst line 6' },
    });
  });

  it('without a README: the app factory is found in the code (started as the package) and no step is invented', () => {
    const parts = servicePlanParts(flaskr(null), 'give me an endpoint');
    expect(parts).toMatchObject({
      app: { command: 'python -m flask --app flaskr run --host 127.0.0.1 --port "$PORT"' },
      before: [],
      specFrom: null,
    });
  });

  it('a step the request names that the README does not give is added when the project has it (a Makefile target, a script)', () => {
    const files = new Map([...flaskr(null), ['Makefile', 'data:\n\tmkdir -p data\n'], ['seed.py', 'open("seed.json", "w")\n']]);
    expect((servicePlanParts(files, 'serve it as an API; run make data first') as { before: unknown }).before).toEqual([
      { name: 'data', command: 'make data', produces: [] },
    ]);
    expect((servicePlanParts(files, 'serve it as an API; run seed.py first') as { before: unknown }).before).toEqual([
      { name: 'seed', command: 'python seed.py', produces: ['seed.json'] },
    ]);
  });

  it('a factory call as the README names it is one shell word; a FastAPI spec from `uvicorn M:app` gets uvicorn', () => {
    const hello = new Map([
      ['hello.py', 'from flask import Flask\n\ndef create_app(name):\n    app = Flask(name)\n    return app\n'],
      ['README.md', '```\n$ flask --app "hello:create_app(\'x\')" run\n```\n'],
    ]);
    expect(servicePlanParts(hello, 'give me an endpoint')).toMatchObject({
      app: { file: 'hello.py', command: `python -m flask --app 'hello:create_app('\\''x'\\'')' run --host 127.0.0.1 --port "$PORT"` },
    });
    const api = new Map([
      ['svc/main.py', 'from fastapi import FastAPI\napi = FastAPI()\n'],
      ['README.md', '    uvicorn svc.main:api --reload\n'],
    ]);
    expect(servicePlanParts(api, 'give me an endpoint')).toMatchObject({
      app: { file: 'svc/main.py', command: 'python -m uvicorn svc.main:api --host 127.0.0.1 --port "$PORT"', framework: 'fastapi' },
      specFrom: 'README.md line 1',
    });
  });

  it('no app and no README spec: the reason, as before', () => {
    expect(servicePlanParts(new Map([['main.py', 'print(1)\n']]), 'give me an endpoint')).toEqual({
      reason: expect.stringMatching(/no file here is an HTTP app/),
    });
  });
});

describe('withSetupSteps', () => {
  it('"initialise the database first" is honoured by the step, saying what it hands to the service', () => {
    const request = 'give me an endpoint; initialise the database first';
    const parts = servicePlanParts(flaskr(README), request) as Parameters<typeof withSetupSteps>[2];
    expect(withSetupSteps(undecided(request), request, parts)).toEqual([
      {
        ask: 'initialise the database first',
        kind: 'setup',
        status: 'honoured',
        detail:
          'runs first as a setup step on the same worker class: `flask --app flaskr init-db` (README.rst line 6; hands instance/flaskr.sqlite to the service)',
      },
    ]);
  });

  it('refused, naming what the project has, when there is no step or the named one is not there; other asks untouched', () => {
    const request = 'give me an endpoint for 2 hours; initialise the database first';
    const none = withSetupSteps(undecided(request), request, { before: [], stepsFrom: {} });
    expect(none.find((d) => d.kind === 'setup')).toMatchObject({
      status: 'refused',
      detail: expect.stringMatching(/README and Makefile give no setup command/),
    });
    expect(none.find((d) => d.kind === 'limit')).toEqual({ ask: 'for 2 hours', kind: 'limit', status: 'refused', detail: 'not decided' });
    const named = 'serve it as an API; run make data first';
    const other = withSetupSteps(undecided(named), named, {
      before: [{ name: 'init-db', command: 'flask --app flaskr init-db', produces: [] }],
      stepsFrom: {},
    });
    expect(other).toEqual([
      {
        ask: 'make data first',
        kind: 'setup',
        status: 'refused',
        detail: 'the project has no setup command `make data`; the setup its README gives is `flask --app flaskr init-db`',
      },
    ]);
  });

  it('serviceDocs: the top-level README and Makefile only', () => {
    expect(serviceDocs(['README.rst', 'docs/README.md', 'Makefile', 'app.py', 'README.txt.bak'])).toEqual(['README.rst', 'Makefile']);
  });
});
