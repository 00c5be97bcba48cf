import { describe, expect, it } from 'vitest';
import type { Setting } from '../../planner/contract.js';
import { entry, runRules } from '../../../../test/helpers/plannerConversation.js';
import { refusalWords, requestAsks, requestThresholds } from './requestAsks.js';

const GPT = 'max_iters = 5000\nn_embd = 384\n';
const constant = (name: string, line: number, text: string): Setting => ({
  id: `gpt.py#${name}`,
  name,
  kind: 'constant',
  file: 'gpt.py',
  type: 'int',
  default: text,
  help: null,
  span: { line, col: name.length + 3, endLine: line, endCol: name.length + 3 + text.length },
});
const SURFACE = { entry: 'gpt.py', settings: [constant('max_iters', 1, '5000'), constant('n_embd', 2, '384')], problems: [], next: null };
const facts = { entryPoints: [entry('gpt.py', { cli: null })] };

describe('requestAsks', () => {
  it('a setting ask reads the entry point’s settings (list_settings), then honours it by a rewrite of the literal', () => {
    expect(runRules({ request: 'train it for 200 iterations', facts, reads: { 'gpt.py': GPT } }, requestAsks).answer).toEqual({
      name: 'list_settings',
      args: { entry: 'gpt.py' },
    });
    const { answer, planning } = runRules(
      { request: 'train it for 200 iterations with n_embd 64', facts, reads: { 'gpt.py': GPT }, tools: [['list_settings', SURFACE]] },
      requestAsks,
    );
    expect(answer).toBeNull();
    expect(planning.askPlan.edits.map((e) => [e.name, e.from, e.to])).toEqual([
      ['max_iters', '5000', '200'],
      ['n_embd', '384', '64'],
    ]);
    expect(planning.askPlan.dispositions.map((d) => d.status)).toEqual(['honoured', 'honoured']);
  });

  it('a next page of settings is read; an output ask reads the entry point’s own modules first', () => {
    expect(
      runRules(
        { request: 'train it for 200 iterations', facts, reads: { 'gpt.py': GPT }, tools: [['list_settings', { ...SURFACE, next: 2 }]] },
        requestAsks,
      ).answer,
    ).toEqual({ name: 'list_settings', args: { entry: 'gpt.py', offset: 2 } });
    const withModule = { entryPoints: facts.entryPoints, importsByFile: { 'gpt.py': { thirdParty: [], local: ['plots'] } } };
    expect(
      runRules({ request: 'give me the figures', facts: withModule, files: ['plots.py'], reads: { 'gpt.py': GPT } }, requestAsks).answer,
    ).toEqual({ name: 'read_file', args: { path: 'plots.py' } });
  });

  it('a setting the project does not have stops the job, naming the settings it has', () => {
    const { answer } = runRules(
      { request: 'train it with dropout 0.2', facts, reads: { 'gpt.py': GPT }, tools: [['list_settings', SURFACE]] },
      requestAsks,
    );
    expect(answer?.name).toBe('give_up');
    expect(answer?.args.reason).toMatch(/^Not run: ".*" — gpt\.py has no setting for .*its settings are: max_iters=5000, n_embd=384/);
  });

  it('requestThresholds and refusalWords', () => {
    expect(requestThresholds('accuracy above 0.9 and loss below 0.5')).toEqual([
      { name: 'accuracy', op: '>', value: 0.9 },
      { name: 'loss', op: '<', value: 0.5 },
    ]);
    expect(
      refusalWords('a.py', [
        { ask: 'x 1', kind: 'setting', status: 'refused', detail: 'no x' },
        { ask: '3 epochs', kind: 'setting', status: 'honoured', detail: 'passed `--epochs 3`' },
      ]),
    ).toBe(
      'Not run: "x 1" — no x. Understood: "3 epochs" (passed `--epochs 3`). Ask again with what a.py can do, and nothing runs until every part of the request can be honoured.',
    );
  });
});
