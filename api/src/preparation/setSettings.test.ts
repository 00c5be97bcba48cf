import { describe, expect, it } from 'vitest';
import { applySettingEdits, type SettingEdit } from './setSettings.js';
import { findPython } from './findPython.js';

const python = (await findPython())!.path;

/** The edit of the first occurrence of `from` on 1-based `line` of `text` (UTF-8 byte columns, as Python's ast gives them). */
function edit(file: string, text: string, line: number, from: string, to: string, name = 'x'): SettingEdit {
  const lineText = text.split('\n')[line - 1]!;
  const at = lineText.indexOf(from);
  const col = Buffer.byteLength(lineText.slice(0, at), 'utf8');
  return { file, name, line, col, endLine: line, endCol: col + Buffer.byteLength(from, 'utf8'), from, to };
}

const SIM = [
  'import numpy as np',
  'nx = 50',
  'dx = 1.0 / nx',
  'dt = 0.1*dx*dx  # stable for explicit Euler',
  'steps = 1000',
  'print(steps, dt)',
  '',
].join('\n');

describe('applySettingEdits', () => {
  it('changes exactly the named literals (a constant, and a literal inside an expression) and shows the diff', async () => {
    const r = await applySettingEdits(
      { 'heat.py': SIM },
      [edit('heat.py', SIM, 4, '0.1', '0.05', 'dt'), edit('heat.py', SIM, 5, '1000', '200', 'steps')],
      python,
    );
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.tree['heat.py']).toBe(SIM.replace('0.1*dx', '0.05*dx').replace('steps = 1000', 'steps = 200'));
    expect(r.changed).toEqual(['heat.py']);
    expect(r.diff).toContain('-dt = 0.1*dx*dx');
    expect(r.diff).toContain('+dt = 0.05*dx*dx');
    expect(r.diff.split('\n').filter((l) => /^[+-][^+-]/.test(l))).toHaveLength(4);
  });

  it('counts columns in UTF-8 bytes, as ast does (a non-ASCII string before the literal on its line)', async () => {
    const src = 'title = "Température"; lr = 0.1\n';
    const r = await applySettingEdits({ 'a.py': src }, [edit('a.py', src, 1, '0.1', '3e-4', 'lr')], python);
    expect(r.ok && r.tree['a.py']).toBe('title = "Température"; lr = 3e-4\n');
  });

  it('accepts literals of every kind: negative numbers, strings, booleans, lists', async () => {
    const src = 'a = 1\nb = "cpu"\nc = False\nd = [64, 64]\n';
    const r = await applySettingEdits(
      { 'c.py': src },
      [
        edit('c.py', src, 1, '1', '-2'),
        edit('c.py', src, 2, '"cpu"', "'cuda'"),
        edit('c.py', src, 3, 'False', 'True'),
        edit('c.py', src, 4, '[64, 64]', '[32]'),
      ],
      python,
    );
    expect(r.ok && r.tree['c.py']).toBe("a = -2\nb = 'cuda'\nc = True\nd = [32]\n");
  });

  it('refuses a value that is not a literal (no code can be smuggled in as a setting)', async () => {
    const src = 'lr = 0.1\n';
    const r = await applySettingEdits({ 'a.py': src }, [edit('a.py', src, 1, '0.1', "__import__('os').system('id')")], python);
    expect(r).toMatchObject({ ok: false, problem: expect.stringContaining('is not a Python literal') });
    const broken = await applySettingEdits({ 'a.py': src }, [edit('a.py', src, 1, '0.1', '1)')], python);
    expect(broken.ok).toBe(false);
  });

  it('refuses a span that covers more than a literal: the syntax tree would change elsewhere', async () => {
    const r = await applySettingEdits({ 'heat.py': SIM }, [{ ...edit('heat.py', SIM, 4, '0.1*dx', '0.2', 'dt') }], python);
    expect(r).toMatchObject({ ok: false, problem: expect.stringContaining('more than the named literals') });
  });

  it('refuses when the file holds other text at the span (the plan was made from other files)', async () => {
    const r = await applySettingEdits({ 'heat.py': SIM }, [{ ...edit('heat.py', SIM, 4, '0.1', '0.05'), from: '0.2' }], python);
    expect(r).toMatchObject({ ok: false, problem: expect.stringContaining('expected "0.2"') });
  });

  it('refuses positions outside the file, overlapping edits, unknown files, other formats and a missing interpreter', async () => {
    const src = 'n = 10\n';
    expect((await applySettingEdits({ 'a.py': src }, [{ ...edit('a.py', src, 1, '10', '5'), line: 9, endLine: 9 }], python)).ok).toBe(
      false,
    );
    const a = edit('a.py', src, 1, '10', '5');
    expect(await applySettingEdits({ 'a.py': src }, [a, { ...a, to: '6' }], python)).toMatchObject({
      ok: false,
      problem: expect.stringContaining('overlap'),
    });
    expect(await applySettingEdits({ 'a.py': src }, [{ ...a, file: 'b.py' }], python)).toMatchObject({
      ok: false,
      problem: expect.stringContaining('No text file b.py'),
    });
    expect(
      await applySettingEdits({ 'c.toml': 'n = 10\n' }, [{ ...edit('c.toml', 'n = 10\n', 1, '10', '5'), file: 'c.toml' }], python),
    ).toMatchObject({ ok: false, problem: expect.stringContaining('Python, YAML or JSON') });
    expect(await applySettingEdits({ 'a.py': src }, [a], null)).toMatchObject({
      ok: false,
      problem: expect.stringContaining('No Python interpreter'),
    });
    expect(await applySettingEdits({ 'a.py': src }, [], python)).toMatchObject({ ok: false });
    expect(await applySettingEdits({ 'a.py': src }, [{ ...a, to: '5\nimport os' }], python)).toMatchObject({
      ok: false,
      problem: expect.stringContaining('one literal on one line'),
    });
  });

  it('refuses to rewrite a Python file that does not parse as uploaded', async () => {
    const src = 'n = 10\ndef f(:\n';
    expect(await applySettingEdits({ 'a.py': src }, [edit('a.py', src, 1, '10', '5')], python)).toMatchObject({
      ok: false,
      problem: expect.stringContaining('does not parse as it is'),
    });
  });

  it('YAML and JSON configs: only the named keys change; a span over two keys is refused', async () => {
    const yaml = 'model:\n  n_layer: 6   # depth\n  n_embd: 384\ntrain:\n  max_iters: 5000\n';
    const r = await applySettingEdits(
      { 'conf/c.yaml': yaml },
      [edit('conf/c.yaml', yaml, 2, '6', '2', 'model.n_layer'), edit('conf/c.yaml', yaml, 5, '5000', '200', 'train.max_iters')],
      python,
    );
    expect(r.ok && r.tree['conf/c.yaml']).toBe('model:\n  n_layer: 2   # depth\n  n_embd: 384\ntrain:\n  max_iters: 200\n');
    const flat = 'a: 1\nb: 2\n';
    const over: SettingEdit = { file: 'x.yaml', name: 'a', line: 1, col: 3, endLine: 2, endCol: 4, from: '1\nb: 2', to: '3' };
    expect((await applySettingEdits({ 'x.yaml': flat }, [over], python)).ok).toBe(false);
    const json = '{\n  "lr": 0.001,\n  "epochs": 10\n}\n';
    const j = await applySettingEdits({ 'cfg.json': json }, [edit('cfg.json', json, 3, '10', '1', 'epochs')], python);
    expect(j.ok && JSON.parse(j.tree['cfg.json']!)).toEqual({ lr: 0.001, epochs: 1 });
    const badJson = '{ "epochs": 10, }';
    expect(await applySettingEdits({ 'cfg.json': badJson }, [edit('cfg.json', badJson, 1, '10', '1', 'epochs')], python)).toMatchObject({
      ok: false,
      problem: expect.stringContaining('does not parse as it is'),
    });
  });
});
