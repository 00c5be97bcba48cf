/** How a run that exited non-zero is classified (runner.ts classifyFailure), from real Python stderr. */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { classifyFailure } from './runner.js';

const run = (code: string) => spawnSync('/usr/bin/python3', ['-c', code], { encoding: 'utf8' });

describe('classifyFailure', () => {
  it('a module missing at run time is DEPENDENCY, naming the module', () => {
    const r = run('import tqdm_not_installed_anywhere\n');
    expect(r.status).toBe(1);
    expect(classifyFailure({ code: r.status, signal: null, memory: null, oomKilled: false, stderrTail: r.stderr })).toEqual({
      errorClass: 'DEPENDENCY',
      errorMessage:
        "missing module: tqdm_not_installed_anywhere (ModuleNotFoundError: No module named 'tqdm_not_installed_anywhere'; exit code 1)",
    });
  });

  it("the program's own error stays EXIT_NONZERO", () => {
    const r = run('raise ValueError("bad input")\n');
    expect(classifyFailure({ code: r.status, signal: null, memory: null, oomKilled: false, stderrTail: r.stderr })).toEqual({
      errorClass: 'EXIT_NONZERO',
      errorMessage: 'exit code 1',
    });
  });
});
