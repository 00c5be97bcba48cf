/**
 * Entry points and flags read with the interpreter's own `ast` (python/entrypoints.py), then
 * turned into the planner's facts — the shapes public projects use, which patterns got wrong.
 */
import { describe, expect, it } from 'vitest';
import { analyzeProject } from './analyzeProject.js';
import { readPythonFacts } from './readPythonFacts.js';

const files = new Map([
  [
    'lm.py',
    [
      'import argparse, torch',
      'import data',
      "parser = argparse.ArgumentParser(description='LM (RNN)')",
      "parser.add_argument('--lr', type=float, default=20, help='initial learning rate (default: 20)')",
      "parser.add_argument('--cuda', action='store_true', default=False, help='use CUDA')",
      "parser.add_argument('--save-model', action='store_true', help='save it')",
      "parser.add_argument('-n', '--num-layers', type=int, default=2, choices=[1, 2, 3])",
      "parser.add_argument('--device', default=os.environ.get('DEVICE', 'cpu'))",
      'args = parser.parse_args()',
      'if args.cuda:',
      '    device = torch.device("cuda")',
      'model = torch.nn.Linear(2, 2).to("cuda" if args.cuda else "cpu")',
      'x = torch.zeros(3).cuda()',
    ].join('\n'),
  ],
  ['data.py', 'import torch\nVOCAB = 10\ntorch.manual_seed(0)\ndef load():\n    return VOCAB\n'],
  ['notes.py', 'print("a script with no flags that nobody imports")\n'],
  [
    'cli.py',
    [
      'import click',
      '@click.command()',
      '@click.option("--epochs", default=3, help="passes (over the data)")',
      '@click.option("--out", type=click.Path(), default="model.pt")',
      '@click.option("--verbose/--quiet", default=False)',
      '@click.option("--opt", type=click.Choice(["sgd", "adam"]), default="adam")',
      'def main(epochs, out, verbose, opt):',
      '    pass',
      'if __name__ == "__main__":',
      '    main()',
    ].join('\n'),
  ],
  [
    'ty.py',
    'import typer\ndef main(epochs: int = 3, learning_rate: float = typer.Option(0.1, "--lr"), fast: bool = False):\n    pass\nif __name__ == "__main__":\n    typer.run(main)\n',
  ],
  ['broken.py', 'def f(:\n'],
]);

describe('readPythonFacts + analyzeProject', async () => {
  const parsed = (await readPythonFacts(files, { python: '/usr/bin/python3' }))!;
  const facts = analyzeProject(files, parsed);
  const ep = (p: string) => facts.entryPoints.find((e) => e.path === p);

  it('finds top-level scripts and __main__ blocks, not modules other files import', () => {
    expect(facts.entryPoints.map((e) => [e.path, e.kind]).sort()).toEqual([
      ['cli.py', 'main-guard'],
      ['lm.py', 'top-level'],
      ['notes.py', 'top-level'],
      ['ty.py', 'main-guard'],
    ]);
    expect(parsed['broken.py']).toMatchObject({ ok: false, error: expect.stringMatching(/SyntaxError/) });
  });

  it('reads argparse flags with parentheses in help, store_true switches, aliases, choices and expression defaults', () => {
    expect(ep('lm.py')!.flags).toEqual([
      { flag: '--lr', type: 'float', default: '20', help: 'initial learning rate (default: 20)', action: null, choices: null },
      { flag: '--cuda', type: 'bool', default: 'False', help: 'use CUDA', action: 'store_true', choices: null },
      { flag: '--save-model', type: 'bool', default: 'False', help: 'save it', action: 'store_true', choices: null },
      { flag: '--num-layers', type: 'int', default: '2', help: null, action: null, choices: ['1', '2', '3'] },
      { flag: '--device', type: null, default: "os.environ.get('DEVICE', 'cpu')", help: null, action: null, choices: null },
    ]);
    expect(ep('lm.py')!.cli).toBe('argparse');
  });

  it('reads click options and typer signatures', () => {
    expect(ep('cli.py')!.flags.map((f) => [f.flag, f.type, f.default, f.choices ?? null])).toEqual([
      ['--epochs', 'int', '3', null],
      ['--out', 'Path', 'model.pt', null],
      ['--verbose', 'bool', 'False', null],
      ['--opt', 'str', 'adam', ['sgd', 'adam']],
    ]);
    expect(ep('ty.py')!.flags.map((f) => [f.flag, f.type, f.default])).toEqual([
      ['--epochs', 'int', '3'],
      ['--lr', 'float', '0.1'],
      ['--fast', 'bool', 'False'],
    ]);
  });

  it('counts CUDA as hard-wired only where no test for it guards the use', () => {
    expect(ep('lm.py')!.hardwiredCuda).toEqual(['lm.py:13']);
  });

  it('without a Python it answers null (the planner then reads with patterns)', async () => {
    expect(await readPythonFacts(files, { python: '/nonexistent/python3' })).toBeNull();
  });
});
