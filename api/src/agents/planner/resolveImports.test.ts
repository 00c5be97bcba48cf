import { describe, expect, it } from 'vitest';
import type { WorkerClass } from '../../domain/workers/networkCapacity.js';
import { analyzeProject } from './analyzeProject.js';
import { importsOf, resolveImports } from './resolveImports.js';

const files = new Map([
  ['train.py', 'import torch, tqdm\nimport yaml\nfrom model import Net\nif __name__ == "__main__":\n    pass\n'],
  ['model.py', 'import einops\nfrom utils.io import load\n'],
  ['utils/io.py', 'import requests\nimport json\n'],
  ['unused.py', 'import pandas\n'],
  ['requirements.txt', 'torch>=1.10\ntqdm==4.66.1  # progress bars\nPyYAML>=6 ; python_version > "3.7"\nrequests\n'],
]);
const facts = analyzeProject(files);

const cls = (over: Partial<WorkerClass>): WorkerClass => ({
  accelVendor: 'none',
  count: 1,
  workloads: ['python', 'torch-cpu'],
  pythonVersions: ['3.11.2'],
  torchVersions: ['1.13.1'],
  numpyVersions: ['1.24.2'],
  maxMemoryMiB: 8192,
  maxAccelMemoryMiB: 0,
  accelerators: [],
  modules: ['numpy', 'requests', 'torch', 'yaml'],
  installers: 0,
  ...over,
});

describe('resolveImports', () => {
  it('follows the project’s own modules from the files that run, not the files that do not', () => {
    expect([...importsOf(facts, ['train.py']).keys()].sort()).toEqual(['einops', 'requests', 'torch', 'tqdm', 'yaml']);
    expect(importsOf(facts, ['train.py']).get('requests')).toEqual(['utils/io.py']);
  });

  it('present on every worker of the class; listed and installable; unlisted or uninstallable is unavailable, in one sentence', () => {
    const noInstall = resolveImports(facts, ['train.py'], [cls({})]);
    expect(noInstall.imports.map((i) => [i.module, i.status, i.requirement])).toEqual([
      ['einops', 'unavailable', null],
      ['requests', 'present', 'requests'],
      ['tqdm', 'unavailable', 'tqdm==4.66.1'],
      ['yaml', 'present', 'PyYAML>=6'],
    ]);
    expect(noInstall.summary).toBe(
      "The workers' Python (3.11.2) lacks einops (imported by model.py), tqdm (imported by train.py). No requirements file lists einops: add it to requirements.txt so a worker can install it. tqdm==4.66.1 is listed, but no online worker installs packages.",
    );
    const installs = resolveImports(
      analyzeProject(new Map([...files, ['model.py', 'from utils.io import load\n']])),
      ['train.py'],
      [cls({ installers: 1 })],
    );
    expect(installs.unavailable).toEqual([]);
    expect(installs.install).toEqual(['tqdm==4.66.1']);
    expect(installs.summary).toMatch(/^A setup phase installs tqdm==4\.66\.1 on the worker before the run/);
  });

  it('a module one worker of the class lacks is not present; workers that report no modules leave it unknown', () => {
    const two = resolveImports(facts, ['utils/io.py'], [cls({}), cls({ accelVendor: 'nvidia', modules: ['torch'] })]);
    expect(two.imports).toEqual([{ module: 'requests', status: 'unavailable', requirement: 'requests', importedBy: ['utils/io.py'] }]);
    expect(resolveImports(facts, ['utils/io.py'], [cls({ modules: null })]).imports[0]!.status).toBe('unknown');
  });

  it("a module a run could not import (a replan's evidence) is checked though no file imports it, and is never taken as present or unknown", () => {
    const project = analyzeProject(
      new Map([
        ['main.py', 'import importlib\nimportlib.import_module(open("p.txt").read())\n'],
        ['requirements.txt', 'requests==2.31\n'],
      ]),
    );
    // The workers say they have requests: the run showed otherwise. Listed and a worker installs → installable.
    const seen = resolveImports(project, ['main.py'], [cls({ installers: 1 })], ['requests']);
    expect(seen.imports).toEqual([
      { module: 'requests', status: 'installable', requirement: 'requests==2.31', importedBy: ['(a run: ModuleNotFoundError)'] },
    ]);
    expect(seen.install).toEqual(['requests==2.31']);
    // Unlisted, on workers that report no modules: unavailable (not unknown), saying what to add.
    const unlisted = resolveImports(project, ['main.py'], [cls({ modules: null, installers: 1 })], ['tqdm']);
    expect(unlisted.unavailable).toEqual(['tqdm']);
    expect(unlisted.summary).toMatch(
      /lacks tqdm \(imported by \(a run: ModuleNotFoundError\)\)\. No requirements file lists tqdm: add it to requirements\.txt/,
    );
  });
});
