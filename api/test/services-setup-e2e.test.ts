/**
 * A hosted service with a setup step from its README (issue: the request is the contract), with
 * real processes: a real API with the builtin planner, a real sandboxed `chatgpu-worker` with
 * Debian's Flask, and a small Flask app written like the Flask tutorial (pallets/flask
 * examples/tutorial, "flaskr"): an app factory `create_app`, a `db.py` whose `init-db` click
 * command creates a sqlite schema in the app's instance folder, a route that reads the table,
 * and a README.rst that says `flask --app flaskr init-db` then `flask --app flaskr run`.
 * "Give me an endpoint; initialise the database first" plans the README's init step before the
 * service and the README's app spec on $PORT; the step's database reaches the service, whose
 * route reads it (200); stopping the service ends the job. A failing init step fails the job
 * naming the step, and no service is started.
 */
import { describe, expect, it } from 'vitest';
import { createBuiltinClient } from '../src/agents/builtin/builtinModel.js';
import { startTestApi } from './helpers/api.js';
import { createWorkerToken } from './helpers/protocolClient.js';
import { startWorker } from './helpers/worker.js';
import { waitFor } from './helpers/waitFor.js';

const INIT = `import os

from flask import Flask


def create_app(test_config=None):
    """Create and configure an instance of the Flask application."""
    app = Flask(__name__, instance_relative_config=True)
    app.config.from_mapping(
        SECRET_KEY="dev",
        # store the database in the instance folder
        DATABASE=os.path.join(app.instance_path, "flaskr.sqlite"),
    )
    try:
        os.makedirs(app.instance_path)
    except OSError:
        pass

    from flaskr import db, blog

    db.init_app(app)
    app.register_blueprint(blog.bp)
    app.add_url_rule("/", endpoint="index")
    return app
`;

const DB = `import sqlite3

import click
from flask import current_app, g


def get_db():
    if "db" not in g:
        g.db = sqlite3.connect(current_app.config["DATABASE"], detect_types=sqlite3.PARSE_DECLTYPES)
        g.db.row_factory = sqlite3.Row
    return g.db


def close_db(e=None):
    db = g.pop("db", None)
    if db is not None:
        db.close()


def init_db():
    """Clear existing data and create new tables."""
    db = get_db()
    with current_app.open_resource("schema.sql") as f:
        db.executescript(f.read().decode("utf8"))


@click.command("init-db")
def init_db_command():
    """Clear existing data and create new tables."""
    init_db()
    click.echo("Initialized the database.")


def init_app(app):
    app.teardown_appcontext(close_db)
    app.cli.add_command(init_db_command)
`;

const BLOG = `from flask import Blueprint

from flaskr.db import get_db

bp = Blueprint("blog", __name__)


@bp.route("/")
def index():
    """Show all the posts: the table init-db made."""
    posts = get_db().execute("SELECT id, title FROM post ORDER BY id").fetchall()
    return {"posts": [dict(p) for p in posts]}
`;

const SCHEMA = `DROP TABLE IF EXISTS post;
CREATE TABLE post (id INTEGER PRIMARY KEY AUTOINCREMENT, title TEXT NOT NULL);
INSERT INTO post (title) VALUES ('made by init-db');
`;

const README = `Flaskr
======

The basic blog app built in the Flask tutorial.

Install
-------

::

    $ python3 -m venv .venv
    $ . .venv/bin/activate
    $ pip install -e .

Run
---

::

    $ flask --app flaskr init-db
    $ flask --app flaskr run --debug

Open http://127.0.0.1:5000 in a browser.
`;

const FAST = { TICK_INTERVAL_SEC: '1', HEARTBEAT_SEC: '1', LEASE_SEC: '4', WORKER_OFFLINE_SEC: '4', RETRY_BASE_SEC: '0' };
const api = await startTestApi(FAST, { scheduler: true, model: createBuiltinClient() });
const prisma = api.server.db.prisma;
const user = await api.signUp();
const workerToken = await createWorkerToken(api, user.token, 'svc-setup');
const FINAL = ['SUCCEEDED', 'FAILED', 'CANCELLED', 'STOPPED'];
const jobQuery = `query($id: ID!) { job(id: $id) { status statusReason service { slug status ready } } }`;

async function submit(title: string, files: Record<string, string>) {
  const uploaded = [];
  for (const [path, text] of Object.entries(files)) uploaded.push({ path, sha256: (await api.putBlob(text, user.token)).sha256 });
  const created = await api.gql(
    `mutation($i: CreateJobInput!) { createJob(input: $i) { ... on Job { id } } }`,
    { i: { title, request: 'give me an endpoint; initialise the database first', files: uploaded } },
    user.token,
  );
  const gid: string = created.data.createJob.id;
  const job = await waitFor(
    () => prisma.job.findFirst({ where: { title, currentPlanId: { not: null } }, include: { currentPlan: true } }),
    120_000,
    'the plan',
  );
  return { gid, jobId: job.id, plan: job.currentPlan! };
}

const svc = async (slug: string, token: string, path = '') => {
  const res = await fetch(`${api.url}/svc/${slug}/${path}`, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, text: await res.text() };
};

describe('a service with a setup step from its README', () => {
  it('flaskr: `flask --app flaskr init-db` runs first, its database reaches the service, whose route reads it; stopping it ends the job', async () => {
    const project = {
      'README.rst': README,
      'flaskr/__init__.py': INIT,
      'flaskr/db.py': DB,
      'flaskr/blog.py': BLOG,
      'flaskr/schema.sql': SCHEMA,
    };
    const w = await startWorker(api.url, workerToken, 'svc-setup-one', ['--python', '/usr/bin/python3']);
    try {
      const { gid, jobId, plan } = await submit('flaskr', project);
      // The README's own app spec and its init step, producing the instance folder's database.
      expect(plan.pipeline).toEqual([{ name: 'init-db', command: 'flask --app flaskr init-db', produces: ['instance/flaskr.sqlite'] }]);
      expect(plan.command).toBe('python -m flask --app flaskr run --host 127.0.0.1 --port "$PORT"');
      expect(plan.asks).toEqual([
        {
          ask: 'initialise the database first',
          kind: 'setup',
          status: 'honoured',
          detail: expect.stringMatching(
            /^runs first as a setup step .*`flask --app flaskr init-db` \(README\.rst line 20; hands instance\/flaskr\.sqlite to the service\)/,
          ),
        },
      ]);

      const token: string = (
        await api.gql(
          `mutation($id: ID!) { rotateServiceToken(jobId: $id, firstOnly: true) { ... on ServiceToken { token } } }`,
          { id: gid },
          user.token,
        )
      ).data.rotateServiceToken.token;
      const slug: string = (await api.gql(jobQuery, { id: gid }, user.token)).data.job.service.slug;
      const served = await waitFor(
        async () => {
          const j = (await api.gql(jobQuery, { id: gid }, user.token)).data.job;
          if (FINAL.includes(j.status)) throw new Error(`job ${j.status}: ${j.statusReason}\n${w.output().slice(-3000)}`);
          const r = await svc(slug, token);
          return r.status === 200 ? r : null;
        },
        120_000,
        'the service to answer',
      );
      // The route reads the table that init-db made in the step's task.
      expect(JSON.parse(served.text)).toEqual({ posts: [{ id: 1, title: 'made by init-db' }] });

      const tasks = await prisma.task.findMany({ where: { jobId }, orderBy: { createdAt: 'asc' } });
      expect(tasks.map((t) => [t.kind, t.name, t.command])).toEqual([
        ['RUN', 'step:init-db', 'flask --app flaskr init-db'],
        ['SERVICE', 'service', 'python -m flask --app flaskr run --host 127.0.0.1 --port "$PORT"'],
      ]);
      expect(tasks[0]!.status).toBe('SUCCEEDED');
      // The step's database is an input of the service at the same path, and the service is the SERVICE task's now.
      expect((tasks[1]!.environment as { inputs?: { path: string }[] }).inputs?.map((i) => i.path)).toEqual(['instance/flaskr.sqlite']);
      expect((await prisma.service.findFirstOrThrow({ where: { jobId } })).taskId).toBe(tasks[1]!.id);

      const stopped = await api.gql(
        `mutation($id: ID!) { stopService(jobId: $id) { ... on Service { status } } }`,
        { id: gid },
        user.token,
      );
      expect(stopped.data.stopService.status).toBe('STOPPED');
      expect((await svc(slug, token)).status).toBe(410);
      const end = await waitFor(
        async () => {
          const j = (await api.gql(jobQuery, { id: gid }, user.token)).data.job;
          return FINAL.includes(j.status) ? j : null;
        },
        30_000,
        'the job to end',
      );
      expect(end.status).toBe('SUCCEEDED');
      await waitFor(
        async () => (await prisma.task.findUniqueOrThrow({ where: { id: tasks[1]!.id } })).status !== 'RUNNING' || null,
        30_000,
        'the service task to end',
      );
    } finally {
      await w.stop();
    }
  }, 240_000);

  it('a failing init step fails the job naming the step and its error; the service never starts', async () => {
    // No schema.sql: init-db cannot open it.
    const project = { 'README.rst': README, 'flaskr/__init__.py': INIT, 'flaskr/db.py': DB, 'flaskr/blog.py': BLOG };
    const w = await startWorker(api.url, workerToken, 'svc-setup-two', ['--python', '/usr/bin/python3']);
    try {
      const { gid, jobId, plan } = await submit('flaskr-broken', project);
      expect(plan.pipeline).toEqual([{ name: 'init-db', command: 'flask --app flaskr init-db', produces: ['instance/flaskr.sqlite'] }]);
      const end = await waitFor(
        async () => {
          const j = (await api.gql(jobQuery, { id: gid }, user.token)).data.job;
          return FINAL.includes(j.status) ? j : null;
        },
        180_000,
        'the job to end',
      );
      expect(end.status).toBe('FAILED');
      expect(end.statusReason).toMatch(/^The pipeline step "init-db" failed: [\s\S]*schema\.sql/);
      expect(await prisma.task.count({ where: { jobId, kind: 'SERVICE' } })).toBe(0);
      expect(end.service.status).not.toBe('READY');
    } finally {
      await w.stop();
    }
  }, 240_000);
});
