/**
 * The checkpoint-resume rewrite (preparation/checkpointResume.ts) on hand-written training programs
 * of the common shapes (api/test/preparation/checkpoint-resume/): each rewritten program passes the
 * kill-and-resume check exactly as the preparation stage runs it (resumeCheckCommand: uninterrupted;
 * SIGKILLed after half its iterations and resumed in a fresh process; final state, outputs and
 * logged losses bitwise equal), and its uninterrupted outputs are byte-identical to the unchanged
 * program's (the reference comparison). The shapes it must refuse say why; a program that already
 * resumes is left as it is; a resume that forgets state is caught by the check.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkpointResume, RESUME_CHECK_REPORT, resumeCheckCommand } from '../src/preparation/checkpointResume.js';
import { transformationByName } from '../src/preparation/transformations.js';
import { checkCase, writeCase } from '../src/preparation/regressionCase.js';
import { inRepo } from '../src/paths.js';
import { torchPython } from './preparation/toolchain.js';

const CASES = inRepo('api/test/preparation/checkpoint-resume');
const CPU = { target: 'cpu' as const, runtime: { torch: '1.13' } };
const program = (name: string) => readFileSync(path.join(CASES, name), 'utf8');

/** A task-like folder: the tree, `python` on PATH (the torch Python), the worker's helpers on PYTHONPATH. */
async function folder(tree: Record<string, string>) {
  const py = (await torchPython()).path;
  const dir = mkdtempSync(path.join(tmpdir(), 'ckpt-resume-'));
  const bin = path.join(dir, '.bin');
  mkdirSync(bin);
  symlinkSync(py, path.join(bin, 'python'));
  for (const [p, text] of Object.entries(tree)) {
    mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
    writeFileSync(path.join(dir, p), text);
  }
  const env = { PATH: `${bin}:/usr/bin:/bin`, PYTHONPATH: inRepo('worker/python'), PYTHONDONTWRITEBYTECODE: '1', HOME: dir };
  const sh = (cmd: string, extra: Record<string, string> = {}) => {
    const r = spawnSync('sh', ['-c', cmd], { cwd: dir, env: { ...env, ...extra }, encoding: 'utf8', timeout: 180_000 });
    return { code: r.status, out: r.stdout + r.stderr };
  };
  return { dir, sh };
}

function outputsOf(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const root = path.join(dir, 'outputs');
  for (const f of readdirSync(root, { recursive: true }) as string[]) out[f] = readFileSync(path.join(root, f)).toString('base64');
  return out;
}

// file, shape, the loop's header after the rewrite, the state objects it names (the runtime keeps those with a state), the carried values.
const SHAPES: [string, string, RegExp, string[], string[]][] = [
  [
    'epoch_dataloader.py',
    'an epoch loop over a shuffling DataLoader with a StepLR scheduler, in main()',
    /for epoch in _chatgpu_run\.loop\(range\(args\.epochs\)\):/,
    ['args', 'loader', 'loss_fn', 'model', 'opt', 'sched'],
    ['best', 'history'],
  ],
  // t0 (a clock reading) is not carried: a resumed process takes its own.
  [
    'max_iters.py',
    'a max_iters loop with get_batch, periodic eval and timings in its log, at module level',
    /for it in _chatgpu_run\.loop\(range\(max_iters\)\):/,
    ['model', 'optimizer'],
    ['best_val'],
  ],
  [
    'amp_scaler.py',
    'AMP-shaped code (autocast, GradScaler disabled on CPU) in a while loop over a step counter',
    /while step < max_steps:\n {4}_chatgpu_run\.tick\(\)\n/,
    ['X', 'model', 'optimizer', 'scaler', 'scheduler', 'use_amp'],
    ['running', 'step'],
  ],
  // X, Y: the batch prefetched for the next step is carried; running_mfu (from timings) is not.
  [
    'while_true_accum.py',
    'a while True loop that breaks at max_iters, with gradient accumulation and a prefetched batch',
    /while True:\n {4}_chatgpu_run\.tick\(\)\n/,
    ['ctx', 'model', 'optimizer', 'scaler', 'tokens'],
    ['X', 'Y', 'iter_num'],
  ],
  [
    'two_optimizers.py',
    'two networks with two optimizers, one pass over a DataLoader with its own generator',
    /for i, \(real,\) in _chatgpu_run\.loop\(enumerate\(loader\)\):/,
    ['D', 'G', 'bce', 'loader', 'opt_d', 'opt_g'],
    ['d_losses'],
  ],
];

describe('checkpoint-resume: the rewrite and the kill-and-resume check', () => {
  for (const [file, shape, header, objects, values] of SHAPES) {
    it(`${shape}: rewritten, resumed bitwise equal after a SIGKILL, and equal to the unchanged program`, async () => {
      const python = (await torchPython()).path;
      const src = program(file);
      const made = await checkpointResume({ [file]: src, 'README.md': '# notes\n' }, CPU, { python });
      expect(made.status).toBe('changed');
      expect(made.changed).toBe(true);
      const out = made.tree[file]!;
      expect(out).toMatch(header);
      expect(made.loop).toMatchObject({ file, objects, values });
      expect(out).toContain('import chatgpu.resume as _chatgpu_resume\n');
      expect(made.tree['README.md']).toBe('# notes\n');
      // Everything but the inserted lines and the loop's iterable is byte-identical.
      const undone = out
        .split('\n')
        .filter(
          (l) =>
            !/^\s*(import chatgpu\.resume as _chatgpu_resume$|_chatgpu_run = _chatgpu_resume\.Run\(|\[[\w, ]*\] = _chatgpu_run\.restore\(|_chatgpu_run\.(restore|tick)\(\)$)/.test(
              l,
            ),
        )
        .join('\n')
        .replace(/_chatgpu_run\.loop\((.*)\):\n/, '$1:\n');
      expect(undone).toBe(src);
      expect(made.edits.map((e) => e.rule).sort()).toEqual(
        expect.arrayContaining(['checkpoint-resume import', 'checkpoint-resume restore']),
      );

      // The check, as the stage's candidate task runs it.
      const cand = await folder({ [file]: out });
      const check = cand.sh(resumeCheckCommand(`python ${file}`));
      expect(check.code, check.out).toBe(0);
      const report = JSON.parse(readFileSync(path.join(cand.dir, RESUME_CHECK_REPORT), 'utf8')) as {
        equal: boolean;
        killed: { afterStep: number; signal: string };
        resumed: { atStep: number };
        uninterrupted: { steps: number };
        compared: { stateEntries: number; lossLines: number };
      };
      expect(report.equal).toBe(true);
      expect(report.killed.signal).toBe('SIGKILL');
      expect(report.resumed.atStep).toBe(report.killed.afterStep);
      expect(report.resumed.atStep).toBeGreaterThan(0);
      expect(report.resumed.atStep).toBeLessThan(report.uninterrupted.steps);
      expect(report.compared.stateEntries).toBeGreaterThan(4);
      expect(report.compared.lossLines).toBeGreaterThan(0);
      expect(check.out).toMatch(/chatgpu\.resume_check: equal: killed after step \d+ of \d+, resumed at step \d+/);

      // The rewrite changes no result: its uninterrupted outputs equal the unchanged program's.
      const orig = await folder({ [file]: src });
      const ran = orig.sh(`python ${file}`);
      expect(ran.code, ran.out).toBe(0);
      expect(outputsOf(cand.dir)).toEqual(outputsOf(orig.dir));
    }, 240_000);
  }

  it('wraps an iterable written over several lines, and finds objects bound together (opt, sched = SGD(…), StepLR(…))', async () => {
    const python = (await torchPython()).path;
    const src = [
      'import os, torch',
      'from torch.utils.data import DataLoader, TensorDataset',
      'torch.manual_seed(2)',
      'loader = DataLoader(TensorDataset(torch.randn(48, 3), torch.randn(48, 1)), batch_size=6, shuffle=True)',
      'model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Dropout(0.2), torch.nn.Linear(4, 1))',
      'opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)',
      'sched, unused = torch.optim.lr_scheduler.StepLR(opt, 3), None',
      'for i, (x, y) in enumerate(',
      '    loader,  # the whole set, once',
      '):',
      '    loss = torch.nn.functional.mse_loss(model(x), y)',
      '    opt.zero_grad(); loss.backward(); opt.step(); sched.step()',
      '    print(f"batch {i} loss {loss.item():.10f}")',
      'os.makedirs("outputs", exist_ok=True)',
      'torch.save(model.state_dict(), "outputs/model.pt")',
      '',
    ].join('\n');
    const made = await checkpointResume({ 'multi.py': src }, CPU, { python });
    expect(made.loop).toMatchObject({ objects: ['loader', 'model', 'opt', 'sched'], values: [] });
    expect(made.tree['multi.py']).toContain('for i, (x, y) in _chatgpu_run.loop(enumerate(\n    loader,  # the whole set, once\n)):\n');
    const f = await folder(made.tree);
    const check = f.sh(resumeCheckCommand('python multi.py'));
    expect(check.code, check.out).toBe(0);
  }, 120_000);

  it('is the transformation the plan names, idempotent on its own output', async () => {
    const python = (await torchPython()).path;
    const made = await transformationByName('checkpoint-resume')({ 'max_iters.py': program('max_iters.py') }, CPU, { python });
    expect(made.changed).toBe(true);
    const again = await checkpointResume(made.tree, CPU, { python });
    expect(again.changed).toBe(false);
    expect(again.status).toBe('unchanged');
    expect(again.reason).toMatch(/already checkpoints and resumes with chatgpu\.resume/);
  });

  const REFUSALS: [string, RegExp][] = [
    ['refuse_no_loop.py', /no recognisable training loop/],
    ['refuse_next_iterator.py', /data position cannot be restored: next\(batches\) draws from an iterator made before the loop/],
    ['refuse_global_counter.py', /state held in module globals that functions the loop calls change \(global_step \(by train_step\(\)\)\)/],
    ['refuse_self_state.py', /state is held in attributes of self \(self\.model, self\.opt\)/],
  ];
  for (const [file, why] of REFUSALS) {
    it(`refuses ${file} with the reason, leaving the code unchanged`, async () => {
      const python = (await torchPython()).path;
      const tree = { [file]: program(file) };
      const made = await checkpointResume(tree, CPU, { python });
      expect(made.status).toBe('refused');
      expect(made.changed).toBe(false);
      expect(made.tree).toEqual(tree);
      expect(made.reason).toMatch(why);
      expect(made.hazards).toHaveLength(1);
      expect(made.hazards[0]).toMatchObject({
        severity: 'error',
        rule: 'checkpoint-resume',
        file: file === 'refuse_no_loop.py' ? '' : file,
      }); // no loop: the project as a whole
      expect(made.hazards[0]!.why).toMatch(/restarts from step 0/);
    });
  }

  it('refuses two training loops in a project, naming both; leaves alone a program that resumes its optimizer itself', async () => {
    const python = (await torchPython()).path;
    const two = await checkpointResume({ 'a.py': program('max_iters.py'), 'b.py': program('amp_scaler.py') }, CPU, { python });
    expect(two.status).toBe('refused');
    expect(two.reason).toMatch(/2 training loops \(a\.py:\d+, b\.py:\d+\)/);
    const own = program('max_iters.py').replace(
      'best_val = 1e9\n',
      "best_val = 1e9\nif os.path.exists('ck.pt'):\n    optimizer.load_state_dict(torch.load('ck.pt')['opt'])\n",
    );
    const kept = await checkpointResume({ 'train.py': own }, CPU, { python });
    expect(kept.status).toBe('unchanged');
    expect(kept.reason).toMatch(/loads an optimizer's saved state: the program has its own resume path/);
  });

  it("a resume that forgets state (the optimizer's momentum) is caught: the check fails and says where", async () => {
    const python = (await torchPython()).path;
    const made = await checkpointResume({ 'train.py': program('epoch_dataloader.py') }, CPU, { python });
    const broken = made.tree['train.py']!.replace(
      /objects=dict\(([^)]*)\)/,
      (_m, names: string) => `objects=dict(${names.replace(/,? ?opt=opt/, '')})`,
    );
    expect(broken).not.toContain('opt=opt');
    const f = await folder({ 'train.py': broken });
    const check = f.sh(resumeCheckCommand('python train.py'));
    expect(check.code).toBe(1);
    const report = JSON.parse(readFileSync(path.join(f.dir, RESUME_CHECK_REPORT), 'utf8')) as { equal: boolean; differences: string[] };
    expect(report.equal).toBe(false);
    expect(report.differences.join('\n')).toMatch(/state objects\.model\.state_dict\.\d\.(weight|bias): uninterrupted/);
    expect(report.differences.join('\n')).toMatch(/outputs\/model\.pt: differs/);
    expect(check.out).toMatch(/chatgpu\.resume_check: NOT equal/);
  }, 120_000);

  it('a regression case of the step is re-checked by killing and resuming: the rewrite passes; a forgetful one is REJECTED', async () => {
    const python = (await torchPython()).path;
    const src = program('epoch_dataloader.py');
    const orig = await folder({ 'train.py': src });
    expect(orig.sh('python train.py --epochs 4').code).toBe(0);
    const reference = Object.fromEntries(
      Object.entries(outputsOf(orig.dir)).map(([p, b64]) => [`outputs/${p}`, Buffer.from(b64, 'base64')]),
    );
    const dir = mkdtempSync(path.join(tmpdir(), 'ckpt-case-'));
    const spec = {
      recordId: 'r',
      jobId: 'j',
      step: 'resume',
      revision: 0,
      transformation: 'checkpoint-resume',
      target: 'cpu' as const,
      tolerance: null,
      command: 'python train.py --epochs 4',
      recorded: { outcome: 'ACCEPTED', reason: 'r' },
      expect: 'ACCEPTED' as const,
    };
    await writeCase(dir, { spec, original: { 'train.py': Buffer.from(src) }, candidateDiff: '', reference });
    const ok = await checkCase(dir, { python });
    expect(ok.outcome, ok.reason).toBe('ACCEPTED');
    const forgetful = await checkCase(dir, {
      python,
      transform: async (tree, ctx, o) => {
        const made = await checkpointResume(tree, ctx, o);
        return { ...made, tree: { ...made.tree, 'train.py': made.tree['train.py']!.replace(/,? ?opt=opt/, '') } };
      },
    });
    expect(forgetful.outcome).toBe('REJECTED');
    expect(forgetful.reason).toMatch(
      /^the bounded workload exited 1: .*state objects\.model\.state_dict\.\d\.(weight|bias): uninterrupted/s,
    );
  }, 180_000);

  it('cannot check a run too short to interrupt, and says so (exit 2)', async () => {
    const python = (await torchPython()).path;
    const made = await checkpointResume({ 'train.py': program('epoch_dataloader.py') }, CPU, { python });
    const f = await folder(made.tree);
    const check = f.sh(resumeCheckCommand('python train.py --epochs 1'));
    expect(check.code).toBe(2);
    expect(check.out).toMatch(/cannot stop after step 0 of a run of 1 step\(s\): the bounded workload needs at least 2 iterations/);
  }, 60_000);
});
