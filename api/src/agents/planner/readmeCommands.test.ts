/**
 * README and Makefile commands (readmeCommands.ts) on the shapes public projects write them:
 * pallets/flask examples/tutorial's README.rst in its two versions (`flask --app flaskr …` since
 * Flask 2.2; `export FLASK_APP=flaskr` then `flask init-db` before it, with a Windows `set` copy),
 * Markdown with fenced blocks and `$ ` prompts, `python init_db.py`, `make data`, and a Makefile
 * whose serve target depends on its setup target.
 */
import { describe, expect, it } from 'vitest';
import { flaskCommand, flaskWrites, makeTargets, readmeCommands, readmeServiceSetup, scriptWrites } from './readmeCommands.js';

const FLASKR_INIT = `import os

from flask import Flask


def create_app(test_config=None):
    app = Flask(__name__, instance_relative_config=True)
    app.config.from_mapping(
        SECRET_KEY="dev",
        DATABASE=os.path.join(app.instance_path, "flaskr.sqlite"),
    )
    try:
        os.makedirs(app.instance_path)
    except OSError:
        pass
    from . import db
    db.init_app(app)
    return app
`;

const FLASKR_DB = `import sqlite3

import click
from flask import current_app, g


def get_db():
    if "db" not in g:
        g.db = sqlite3.connect(current_app.config["DATABASE"])
    return g.db


@click.command("init-db")
def init_db_command():
    get_db().executescript("create table post (id integer primary key, title text);")
    click.echo("Initialized the database.")


def init_app(app):
    app.cli.add_command(init_db_command)
`;

/** examples/tutorial/README.rst since Flask 2.2 (abridged: the same sections and literal blocks). */
const README_APP_FLAG = `Flaskr
======

The basic blog app built in the Flask \`tutorial\`_.

Install
-------

Create a virtualenv and activate it::

    $ python3 -m venv .venv
    $ . .venv/bin/activate

Install Flaskr::

    $ pip install -e .

Run
---

.. code-block:: text

    $ flask --app flaskr init-db
    $ flask --app flaskr run --debug

Open http://127.0.0.1:5000 in a browser.

Test
----

::

    $ pip install '.[test]'
    $ pytest
`;

/** The same README before Flask 2.2: the app in FLASK_APP, and the commands shown again for Windows cmd. */
const README_ENV = `Run
---

::

    export FLASK_APP=flaskr
    export FLASK_ENV=development
    flask init-db
    flask run

Or on Windows cmd::

    set FLASK_APP=flaskr
    set FLASK_ENV=development
    flask init-db
    flask run

Open http://127.0.0.1:5000 in a browser.
`;

const flaskr = (readme: string, name = 'README.rst') =>
  new Map([
    [name, readme],
    ['flaskr/__init__.py', FLASKR_INIT],
    ['flaskr/db.py', FLASKR_DB],
    ['flaskr/schema.sql', 'create table post (id integer primary key);'],
    ['tests/test_db.py', 'def test_init_db(runner):\n    assert "Initialized" in runner.invoke(args=["init-db"]).output\n'],
  ]);

describe('readmeCommands', () => {
  it('reads command lines of literal blocks with $ prompts, in order, and nothing of the prose', () => {
    expect(readmeCommands(flaskr(README_APP_FLAG)).map((c) => [c.line, c.command])).toEqual([
      [11, 'python3 -m venv .venv'],
      [23, 'flask --app flaskr init-db'],
      [24, 'flask --app flaskr run --debug'],
    ]);
  });

  it('carries FLASK_APP from export lines, and a Windows copy of the same commands is read once', () => {
    const cmds = readmeCommands(flaskr(README_ENV));
    expect(cmds.map((c) => [c.command, c.env.FLASK_APP])).toEqual([
      ['flask init-db', 'flaskr'],
      ['flask run', 'flaskr'],
    ]);
  });

  it('reads Markdown fences, `$ ` and `(venv) $` prompts, commands quoted inline in prose and an inline VAR=value prefix', () => {
    const md = [
      '# App',
      '',
      'Run `python init_db.py` first.',
      '',
      '```bash',
      '$ FLASK_APP=app.py flask initdb',
      '(venv) $ python -m flask --app app run',
      '```',
      '',
      'python is needed.',
    ].join('\n');
    const cmds = readmeCommands(new Map([['README.md', md]]));
    expect(cmds.map((c) => [c.command, c.env])).toEqual([
      ['python init_db.py', {}],
      ['flask initdb', { FLASK_APP: 'app.py' }],
      ['python -m flask --app app run', {}],
    ]);
  });

  it('reads only the top-level README', () => {
    expect(readmeCommands(new Map([['docs/README.md', '    flask --app x init-db\n']]))).toEqual([]);
  });
});

describe('flaskCommand', () => {
  it('--app, -A, --app=, FLASK_APP, python -m flask; options before the subcommand skipped', () => {
    expect(flaskCommand({ command: 'flask --app flaskr init-db', env: {} })).toEqual({ app: 'flaskr', sub: 'init-db', args: [] });
    expect(flaskCommand({ command: 'flask init-db', env: { FLASK_APP: 'flaskr' } })).toEqual({ app: 'flaskr', sub: 'init-db', args: [] });
    expect(flaskCommand({ command: 'python3 -m flask -A "hello:create_app()" --debug run --port 8000', env: {} })).toEqual({
      app: 'hello:create_app()',
      sub: 'run',
      args: ['--port', '8000'],
    });
    expect(flaskCommand({ command: 'flask --app=app.py -e .flaskenv seed', env: {} })).toEqual({ app: 'app.py', sub: 'seed', args: [] });
    expect(flaskCommand({ command: 'flask --debug', env: {} })).toBeNull();
    expect(flaskCommand({ command: 'python app.py', env: {} })).toBeNull();
  });
});

describe('readmeServiceSetup', () => {
  it('flaskr, README with --app: the app spec of its run line and `flask --app flaskr init-db` before it, writing the instance folder’s sqlite file', () => {
    expect(readmeServiceSetup(flaskr(README_APP_FLAG), 'flaskr/__init__.py')).toEqual({
      app: { framework: 'flask', spec: 'flaskr', from: 'README.rst line 24' },
      steps: [{ name: 'init-db', command: 'flask --app flaskr init-db', produces: ['instance/flaskr.sqlite'], from: 'README.rst line 23' }],
    });
  });

  it('flaskr, README with FLASK_APP: the same app, and the step keeps the README’s way of naming it', () => {
    expect(readmeServiceSetup(flaskr(README_ENV), 'flaskr/__init__.py')).toEqual({
      app: { framework: 'flask', spec: 'flaskr', from: 'README.rst line 9' },
      steps: [
        { name: 'init-db', command: 'FLASK_APP=flaskr flask init-db', produces: ['instance/flaskr.sqlite'], from: 'README.rst line 8' },
      ],
    });
  });

  it('`python init_db.py` and `make data` before `python app.py` (the app, which reads $PORT): steps with what they write', () => {
    const files = new Map([
      ['README.md', '## Run\n\n```\n$ pip install -r requirements.txt\n$ make data\n$ python init_db.py\n$ python app.py\n$ pytest\n```\n'],
      [
        'Makefile',
        '.PHONY: data\ndata: data/words.txt\n\ndata/words.txt:\n\tmkdir -p data\n\tpython make_words.py > data/words.txt\n\ntest:\n\tpytest\n',
      ],
      ['init_db.py', 'import sqlite3\ncon = sqlite3.connect("app.db")\ncon.execute("create table t (x)")\n'],
      ['make_words.py', 'print("a")\n'],
      ['app.py', 'import os\nfrom http.server import HTTPServer\nHTTPServer(("", int(os.environ["PORT"])), None).serve_forever()\n'],
    ]);
    expect(readmeServiceSetup(files, 'app.py')).toEqual({
      app: null,
      steps: [
        { name: 'data', command: 'make data', produces: ['data', 'data/words.txt'], from: 'README.md line 5' },
        { name: 'init-db', command: 'python init_db.py', produces: ['app.db'], from: 'README.md line 6' },
      ],
    });
  });

  it('no serve command: only commands named like setup; a Makefile serve target’s prerequisites when the README gives none', () => {
    const readme = new Map([
      ['README.md', '```\npython train.py\npython create_db.py\n```\n'],
      ['train.py', ''],
      ['create_db.py', 'open("seed.json", "w").write("[]")\n'],
    ]);
    expect(readmeServiceSetup(readme, null).steps.map((s) => [s.command, s.produces])).toEqual([['python create_db.py', ['seed.json']]]);
    const make = new Map([
      ['Makefile', 'run: initdb\n\tflask --app web run\n\ninitdb:\n\tpython -c "import web; web.init()"\n\tmkdir -p var\n'],
    ]);
    expect(readmeServiceSetup(make, null)).toEqual({
      app: null,
      steps: [{ name: 'initdb', command: 'make initdb', produces: ['var'], from: 'Makefile (run: initdb)' }],
    });
  });

  it('`(venv)` prompts without `$`; of several serve commands, the one serving the app its setup step sets up', () => {
    const readme = [
      '### Initialize DB',
      '',
      '```',
      '(venv) flask --app flaskr init-db',
      '```',
      '',
      '### Start the server',
      '',
      '```',
      '(venv) flask --app hello run              # run the simplest single-file app',
      '(venv) flask --app flaskr run             # run the blog app',
      '```',
    ].join('\n');
    expect(readmeServiceSetup(flaskr(readme, 'README.md'), null)).toEqual({
      app: { framework: 'flask', spec: 'flaskr', from: 'README.md line 11' },
      steps: [{ name: 'init-db', command: 'flask --app flaskr init-db', produces: ['instance/flaskr.sqlite'], from: 'README.md line 4' }],
    });
  });

  it('uvicorn MODULE:app gives a FastAPI spec; install, test and Flask’s own commands are never steps', () => {
    const files = new Map([
      [
        'README.md',
        '    pip install .\n    python -m pytest\n    flask --app api routes\n    make install\n    uvicorn service.main:app --reload\n',
      ],
    ]);
    expect(readmeServiceSetup(files, null)).toEqual({
      app: { framework: 'fastapi', spec: 'service.main:app', from: 'README.md line 5' },
      steps: [],
    });
  });
});

describe('what steps write', () => {
  it("Flask's instance folder sits beside the app's package (or module); without a file joined to it, the folder", () => {
    expect(flaskWrites(new Map([['src/site/__init__.py', 'os.makedirs(app.instance_path)\n']]), 'site')).toEqual(['instance']);
    expect(flaskWrites(new Map([['web/app.py', 'db = os.path.join(current_app.instance_path, "w.db")\n']]), 'web.app')).toEqual([
      'web/instance/w.db',
    ]);
    expect(flaskWrites(new Map([['app.py', 'SQLALCHEMY_DATABASE_URI = "sqlite:///site.db"\n']]), 'app')).toEqual(['site.db']);
  });

  it('scripts: sqlite files, files opened for writing and folders made at literal paths; never outside the project', () => {
    expect(
      scriptWrites(
        'sqlite3.connect("./db/app.sqlite")\nopen("/etc/x", "w")\nopen("../y", "w")\nopen("notes.txt", "a")\nos.makedirs("cache/")\nPath("models").mkdir()\nsqlite3.connect(":memory:")\n',
      ),
    ).toEqual(['cache', 'db/app.sqlite', 'models', 'notes.txt']);
  });

  it('Makefile targets: prerequisites and recipes; variables and dot-targets are not targets', () => {
    const t = makeTargets('CC := gcc\n.PHONY: all\nall: a b\n\techo hi\n\n# comment\na:\n\t@touch a.txt\n');
    expect([...t.keys()]).toEqual(['all', 'a']);
    expect(t.get('all')).toEqual({ deps: ['a', 'b'], recipe: ['echo hi'] });
    expect(t.get('a')?.recipe).toEqual(['touch a.txt']);
  });
});
