import { describe, expect, it } from 'vitest';
import { entry, runRules } from '../../../../test/helpers/plannerConversation.js';
import { hostedService, serviceAsks } from './hostedService.js';

const APP = 'from flask import Flask\napp = Flask(__name__)\n\n@app.get("/healthz")\ndef health():\n    return "ok"\n';

describe('hostedService', () => {
  const facts = {
    entryPoints: [entry('app.py', { cli: null })],
    importsByFile: { 'app.py': { thirdParty: ['flask'], local: [] } },
    imports: ['flask'],
  };
  it('an endpoint request: the Python files and the README are read, the imports resolved, then the service planned on its health path', () => {
    expect(runRules({ request: 'give me an endpoint', facts, files: ['app.py', 'README.md'] }, hostedService).answer).toEqual({
      name: 'read_file',
      args: { path: 'app.py' },
    });
    const reads = { 'app.py': APP, 'README.md': '# demo\n' };
    expect(runRules({ request: 'give me an endpoint', facts, reads }, hostedService).answer).toEqual({
      name: 'check_dependencies',
      args: { files: ['app.py'], workload: 'python' },
    });
    const { answer } = runRules(
      {
        request: 'give me an endpoint for 2 hours',
        facts,
        reads,
        tools: [['check_dependencies', { imports: [], install: [], unavailable: [], summary: null }]],
      },
      hostedService,
    );
    expect(answer?.name).toBe('submit_plan');
    expect(answer?.args).toMatchObject({
      command: 'python -m flask --app app:app run --host 127.0.0.1 --port "$PORT"',
      service: { readiness: { path: '/healthz', intervalSec: 1, timeoutSec: 5 }, durationSec: 7200, servers: ['flask'] },
    });
  });
  it('any other request is not a service: the rules go on', () => {
    expect(runRules({ request: 'train it for 3 epochs', facts }, hostedService).answer).toBeNull();
  });
  it('serviceAsks: how long and where it serves are honoured; a setting of the app is refused, saying the builtin planner does not change it', () => {
    expect(serviceAsks('serve it for 2 hours on port 8080, with lr 0.1', 7200)).toEqual([
      expect.objectContaining({ kind: 'limit', status: 'honoured', detail: 'served for 7200 s' }),
      expect.objectContaining({ kind: 'setting', status: 'honoured', detail: expect.stringMatching(/^reachable at the service's URL/) }),
      expect.objectContaining({
        kind: 'setting',
        status: 'refused',
        detail: 'a hosted service runs the app as uploaded: its settings are not changed by the builtin planner yet',
      }),
    ]);
  });
});
