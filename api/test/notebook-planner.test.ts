/**
 * The builtin planner's rule table on a project that is only a notebook, with the facts and the
 * settings surface the real tools answer (analyzeProject, listSettings with the real Python reader):
 * the notebook is what runs, through the worker's notebook runner, and a request's setting is
 * passed as `--set NAME=VALUE`.
 */
import { describe, expect, it } from 'vitest';
import { analyzeProject } from '../src/agents/planner/analyzeProject.js';
import { listSettings } from '../src/agents/planner/settings/listSettings.js';
import { entryPoint } from '../src/agents/builtin/planner/entryPoint.js';
import { runRules } from './helpers/plannerConversation.js';

const NB = JSON.stringify({
  nbformat: 4,
  nbformat_minor: 4,
  metadata: {},
  cells: [
    { cell_type: 'markdown', metadata: {}, source: ['# Descent'] },
    {
      cell_type: 'code',
      metadata: {},
      outputs: [],
      execution_count: null,
      source: ['import numpy as np\n', 'import matplotlib.pyplot as plt\n', 'lr = 0.1  # learning rate\n', 'steps = 30'],
    },
    {
      cell_type: 'code',
      metadata: {},
      outputs: [],
      execution_count: null,
      source: ['w = 0.0\n', 'for _ in range(steps):\n', '    w -= lr * (w - 2)\n', 'print(w)\n', 'plt.plot([w])'],
    },
  ],
});
const NO_IMPORTS_MISSING = { imports: [], install: [], unavailable: [], summary: null };

async function recorded(request: string, files: Record<string, string>) {
  const map = new Map(Object.entries(files));
  const facts = analyzeProject(map);
  const entry = facts.entryPoints[0]?.path ?? null;
  const surface = await listSettings(map, { entry });
  return {
    request,
    facts,
    reads: files,
    tools: [
      ['list_settings', { ...surface, next: null }],
      ['check_dependencies', NO_IMPORTS_MISSING],
    ] as [string, unknown][],
  };
}

describe('the builtin planner on a notebook', () => {
  it('a folder with only a notebook has an entry point: the notebook', async () => {
    const { answer, planning } = runRules(await recorded('run the notebook', { 'descent.ipynb': NB }), entryPoint);
    expect(answer).toBeNull();
    expect(planning.entry).toMatchObject({ path: 'descent.ipynb', kind: 'notebook' });
  });

  it('of two notebooks, the one whose name the request uses as a word', async () => {
    const both = await recorded('run the descent notebook', { 'descent.ipynb': NB, 'explore.ipynb': NB });
    expect(both.facts.entryPoints.map((e) => e.path)).toEqual(['descent.ipynb', 'explore.ipynb']);
    const { answer, planning } = runRules(both, entryPoint);
    expect(answer).toBeNull();
    expect(planning.entry.path).toBe('descent.ipynb');
    expect(runRules(await recorded('run the notebook', { 'descent.ipynb': NB, 'explore.ipynb': NB }), entryPoint).answer).toMatchObject({
      name: 'ask_user',
      args: { choices: ['descent.ipynb', 'explore.ipynb'] },
    });
  });

  it('"run the notebook with lr 0.01": the notebook runner with --set lr=0.01, the ask honoured', async () => {
    const { answer } = runRules(await recorded('run the notebook with lr 0.01', { 'descent.ipynb': NB }));
    expect(answer?.name, JSON.stringify(answer)).toBe('submit_plan');
    const plan = answer!.args as { command: string; asks: { ask: string; status: string; detail: string }[] };
    expect(plan.command).toBe('python -m chatgpu.notebook descent.ipynb --set lr=0.01');
    expect(plan.asks).toEqual([
      expect.objectContaining({ ask: 'lr 0.01', status: 'honoured', detail: 'overridden on the command line: `--set lr=0.01`' }),
    ]);
  });

  it("a setting the notebook's settings cell does not have is refused, naming what it has", async () => {
    const { answer } = runRules(await recorded('run the notebook with momentum 0.9', { 'descent.ipynb': NB }));
    expect(answer?.name).toBe('give_up');
    expect(String(answer!.args.reason)).toMatch(/momentum/);
    expect(String(answer!.args.reason)).toMatch(/\blr\b/);
  });
});
