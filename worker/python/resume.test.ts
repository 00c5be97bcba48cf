/**
 * chatgpu.resume, the runtime of the checkpoint-resume step: the files it keeps (the last two,
 * written whole, the step beside them for the worker), a newest checkpoint that does not load is
 * passed over for the one before it, a drain (SIGTERM) saves and exits 143 between iterations,
 * and a run resumes from a folder the worker restored.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const HELPERS = path.dirname(fileURLToPath(import.meta.url));
const PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';

// A loop made resumable the way the rewrite does it (five iterations, a carried list, a model and an optimizer).
const SCRIPT = `import chatgpu.resume as _chatgpu_resume
import os, sys, time
import torch
torch.manual_seed(0)
model = torch.nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
losses = []
_chatgpu_run = _chatgpu_resume.Run(objects=dict(model=model, opt=opt), values=lambda: dict(losses=losses))
[losses] = _chatgpu_run.restore(losses=losses)
for epoch in _chatgpu_run.loop(range(5)):
    loss = model(torch.randn(4, 3)).pow(2).mean()
    opt.zero_grad(); loss.backward(); opt.step()
    losses.append(round(loss.item(), 6))
    print(f"epoch {epoch} loss {loss.item():.8f}", flush=True)
    if os.environ.get("SLOW"):
        time.sleep(float(os.environ["SLOW"]))
print("losses", losses)
`;

function project() {
  const dir = mkdtempSync(path.join(tmpdir(), 'resume-helper-'));
  writeFileSync(path.join(dir, 'train.py'), SCRIPT);
  const ck = path.join(dir, 'ck');
  const env = (extra: Record<string, string> = {}) => ({
    PATH: '/usr/bin:/bin',
    PYTHONPATH: HELPERS,
    PYTHONDONTWRITEBYTECODE: '1',
    CHATGPU_CHECKPOINT_DIR: ck,
    ...extra,
  });
  const run = (extra: Record<string, string> = {}) => {
    const r = spawnSync(PYTHON, ['train.py'], { cwd: dir, encoding: 'utf8', env: env(extra), timeout: 60_000 });
    return { code: r.status, out: r.stdout, err: r.stderr };
  };
  return { dir, ck, run, env };
}

describe('chatgpu.resume', () => {
  it('keeps the last two checkpoints, whole, with the step for the worker; a second start resumes after the last', () => {
    const p = project();
    const first = p.run({ CHATGPU_RESUME_EVERY_STEPS: '1' });
    expect(first.code, first.err).toBe(0);
    expect(readdirSync(p.ck).sort()).toEqual(['chatgpu-checkpoint.json', 'resume-000000004.pt', 'resume-000000005.pt']);
    expect(JSON.parse(readFileSync(path.join(p.ck, 'chatgpu-checkpoint.json'), 'utf8'))).toEqual({ step: 5, of: 5 });
    const again = p.run();
    expect(again.code, again.err).toBe(0);
    expect(again.out).toMatch(
      /^chatgpu\.resume: resumed at step 5 of 5 from a checkpoint of \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(saved \d+ s ago\)\n/,
    );
    expect(again.out).not.toMatch(/epoch \d/); // every iteration was done
    expect(again.out.split('\n').find((l) => l.startsWith('losses'))).toBe(first.out.split('\n').find((l) => l.startsWith('losses')));
  });

  it('passes over a newest checkpoint that does not load and resumes from the one before it, to the same end', () => {
    const p = project();
    const whole = p.run({ CHATGPU_RESUME_EVERY_STEPS: '1' });
    writeFileSync(path.join(p.ck, 'resume-000000005.pt'), 'truncated');
    const r = p.run();
    expect(r.code, r.err).toBe(0);
    expect(r.err).toMatch(/chatgpu\.resume: skipped resume-000000005\.pt/);
    expect(r.out).toMatch(/resumed at step 4 of 5/);
    expect(r.out).toContain(whole.out.split('\n').find((l) => l.startsWith('epoch 4'))!);
    expect(r.out.split('\n').find((l) => l.startsWith('losses'))).toBe(whole.out.split('\n').find((l) => l.startsWith('losses')));
  });

  it('a drain (SIGTERM) saves between iterations and exits 143; the next start resumes there', async () => {
    const p = project();
    const child = spawn(PYTHON, ['train.py'], { cwd: p.dir, env: p.env({ SLOW: '0.4', CHATGPU_RESUME_EVERY_SEC: '3600' }) });
    let out = '';
    child.stdout.on('data', (b: Buffer) => {
      out += b.toString();
    });
    await new Promise<void>((resolve) => {
      const t = setInterval(() => {
        if (out.includes('epoch 1 ')) {
          clearInterval(t);
          resolve();
        }
      }, 20);
    });
    child.kill('SIGTERM');
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    expect(code).toBe(143);
    expect(out).toMatch(/chatgpu\.resume: drained: saved step [23], exiting/);
    const step = Number(/saved step (\d)/.exec(out)![1]);
    const r = p.run();
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain(`resumed at step ${step} of 5`);
    expect(r.out).toContain('epoch 4 ');
  });

  it('a program that never seeds: the tensors its loop uses (data, weights trained by hand) are saved and restored in place, so the kill-and-resume check finds it equal', () => {
    // The shape of course code (jcjohnson/pytorch-examples): random data and weights, no seed, the loop updating the weights by hand;
    // its loss lines carry a duration written unit first, as pytorch/examples' word_language_model logs it (left out of the comparison).
    const unseeded = `import chatgpu.resume as _chatgpu_resume
import time
import torch
x = torch.randn(16, 5)
y = torch.randn(16, 2)
w = torch.randn(5, 2, requires_grad=True)
_chatgpu_run = _chatgpu_resume.Run(objects=dict(w=w, x=x, y=y), values=lambda: dict())
[] = _chatgpu_run.restore()
for t in _chatgpu_run.loop(range(6)):
    loss = (x.mm(w) - y).pow(2).sum()
    print(f"| step {t} | ms/batch {time.time() % 1 * 1000:5.2f} | loss {loss.item()}", flush=True)
    loss.backward()
    with torch.no_grad():
        w -= 1e-3 * w.grad
        w.grad.zero_()
import os
os.makedirs("outputs", exist_ok=True)
torch.save({"w": w.detach()}, "outputs/w.pt")
`;
    const p = project();
    writeFileSync(path.join(p.dir, 'train.py'), unseeded);
    const r = spawnSync(PYTHON, ['-m', 'chatgpu.resume_check', '--report', 'report.json', '--', 'python3 train.py'], {
      cwd: p.dir,
      encoding: 'utf8',
      env: p.env(),
      timeout: 120_000,
    });
    const report = JSON.parse(readFileSync(path.join(p.dir, 'report.json'), 'utf8')) as { equal: boolean; killed: { afterStep: number } };
    expect(report.equal, `${r.stdout}${r.stderr}`).toBe(true);
    expect(report.killed.afterStep).toBe(3);
    expect(r.status).toBe(0);
    // Without the data tensors in its objects the resumed process (another seed) trains on other data: caught.
    writeFileSync(path.join(p.dir, 'train.py'), unseeded.replace('objects=dict(w=w, x=x, y=y)', 'objects=dict(w=w)'));
    const bad = spawnSync(PYTHON, ['-m', 'chatgpu.resume_check', '--report', 'report.json', '--', 'python3 train.py'], {
      cwd: p.dir,
      encoding: 'utf8',
      env: p.env(),
      timeout: 120_000,
    });
    expect(bad.status).toBe(1);
    const badReport = JSON.parse(readFileSync(path.join(p.dir, 'report.json'), 'utf8')) as { equal: boolean; differences: string[] };
    expect(badReport.equal).toBe(false);
    expect(badReport.differences).toContainEqual(expect.stringMatching(/^state objects\.w\.tensor: uninterrupted/));
  });
});

describe('chatgpu.resume_check: bitwise or within a tolerance', () => {
  // The resumed process adds NOISE to the weights after restoring them: what a non-deterministic kernel would leave behind.
  const NOISY = `import chatgpu.resume as _chatgpu_resume
import json, os
import torch
torch.manual_seed(0)
model = torch.nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
losses = []
_chatgpu_run = _chatgpu_resume.Run(objects=dict(model=model, opt=opt), values=lambda: dict(losses=losses))
[losses] = _chatgpu_run.restore(losses=losses)
if os.environ.get("CHATGPU_RESUME"):
    with torch.no_grad():
        model.weight.add_(float(os.environ["NOISE"]))
for epoch in _chatgpu_run.loop(range(6)):
    loss = model(torch.randn(4, 3)).pow(2).mean()
    opt.zero_grad(); loss.backward(); opt.step()
    losses.append(loss.item())
    print(f"epoch {epoch} loss {loss.item():.8f}", flush=True)
os.makedirs("outputs", exist_ok=True)
torch.save({"w": model.weight.detach(), "steps": 6}, "outputs/model.pt")
with open("outputs/metrics.json", "w") as f:
    json.dump({"loss": losses[-1]}, f)
`;
  interface Report {
    equal: boolean;
    mode: string;
    modeReason: string;
    tolerance?: { rtol: number; atol: number; source: string };
    largestDifferences?: Record<string, { at: string; absolute: number; relative: number }>;
    differences: string[];
  }
  function check(noise: string, args: string[], extra: Record<string, string> = {}) {
    const p = project();
    writeFileSync(path.join(p.dir, 'train.py'), NOISY);
    const r = spawnSync(PYTHON, ['-m', 'chatgpu.resume_check', '--report', 'report.json', ...args, '--', 'python3 train.py'], {
      cwd: p.dir,
      encoding: 'utf8',
      env: p.env({ NOISE: noise, ...extra }),
      timeout: 120_000,
    });
    return { code: r.status, err: r.stderr, report: JSON.parse(readFileSync(path.join(p.dir, 'report.json'), 'utf8')) as Report };
  }

  it('a resumed run 1e-6 off: unequal bitwise on CPU; equal in tolerance mode with the mode, its reason, the tolerance and the largest differences recorded', () => {
    const bitwise = check('1e-6', []);
    expect(bitwise.code).toBe(1);
    expect(bitwise.report).toMatchObject({ equal: false, mode: 'bitwise', modeReason: 'device cpu: deterministic' });
    expect(bitwise.report.differences).toContainEqual(
      expect.stringMatching(/^state objects\.model\.state_dict\.weight: uninterrupted 'torch\.float32/),
    );
    expect(bitwise.report.differences).toContain('outputs/model.pt: differs');
    expect(bitwise.report.tolerance).toBeUndefined();

    const tolerant = check('1e-6', ['--mode', 'tolerance', '--rtol', '1e-4', '--atol', '1e-6']);
    expect(tolerant.code, tolerant.err).toBe(0);
    expect(tolerant.report).toMatchObject({
      equal: true,
      mode: 'tolerance',
      modeReason: 'tolerance asked for (--mode tolerance)',
      tolerance: { rtol: 1e-4, atol: 1e-6, source: 'job' },
      differences: [],
    });
    // Parameters, optimizer state, the carried losses, the output files and the logged loss lines all differed a little, within it.
    for (const part of ['state', 'outputs', 'losses']) {
      const d = tolerant.report.largestDifferences![part]!;
      expect(d.absolute, part).toBeGreaterThan(0);
      expect(d.absolute, part).toBeLessThan(1e-4);
    }
    // Forced by the environment as well (an operator's switch), with torch.testing's defaults when the job gives none.
    const byEnv = check('1e-7', [], { CHATGPU_RESUME_CHECK_MODE: 'tolerance' });
    expect(byEnv.report).toMatchObject({ mode: 'tolerance', tolerance: { rtol: 1.3e-6, atol: 1e-5, source: 'default' } });
  });

  it('a resumed run 1e-2 off fails in tolerance mode too, saying by how much', () => {
    const r = check('1e-2', ['--mode', 'tolerance', '--rtol', '1e-4', '--atol', '1e-6']);
    expect(r.code).toBe(1);
    expect(r.report).toMatchObject({ equal: false, mode: 'tolerance' });
    expect(r.report.differences).toContainEqual(
      expect.stringMatching(
        /^state objects\.model\.state_dict\.weight: beyond rtol=0\.0001, atol=1e-06 \(largest difference [\d.e-]+, relative/,
      ),
    );
    expect(r.report.differences).toContain('outputs/model.pt: differs beyond the tolerance');
    expect(r.report.differences).toContainEqual(expect.stringMatching(/^logged losses differ beyond the tolerance from line 4 /));
    expect(r.report.largestDifferences!.state!.absolute).toBeGreaterThan(1e-3);
    expect(r.err).toMatch(/chatgpu\.resume_check: NOT equal: state objects\.model\.state_dict\.bias: beyond rtol/);
  });

  it('the mode follows the device: bitwise on CPU or with deterministic algorithms, tolerance on CUDA, ROCm and MPS', () => {
    const cases = [
      [{ devices: ['cpu'], hip: false, deterministic: false }, ['bitwise', 'device cpu: deterministic']],
      [{}, ['bitwise', 'device cpu: deterministic']],
      [{ devices: ['cpu', 'cuda'], hip: false, deterministic: false }, ['tolerance', 'device cuda: non-deterministic kernels']],
      [{ devices: ['cuda'], hip: true, deterministic: false }, ['tolerance', 'device rocm: non-deterministic kernels']],
      [{ devices: ['mps'], hip: false, deterministic: false }, ['tolerance', 'device mps: non-deterministic kernels']],
      [{ devices: ['cuda'], hip: false, deterministic: true }, ['bitwise', 'device cuda with torch.use_deterministic_algorithms(True)']],
    ] as const;
    const code = `import json, sys\nfrom chatgpu.resume_check import decide_mode\nprint(json.dumps([decide_mode("auto", c) for c in json.loads(sys.argv[1])] + [decide_mode("bitwise", {"devices": ["cuda"]})]))`;
    const r = spawnSync(PYTHON, ['-c', code, JSON.stringify(cases.map((c) => c[0]))], {
      encoding: 'utf8',
      env: { PATH: '/usr/bin:/bin', PYTHONPATH: HELPERS },
    });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([...cases.map((c) => c[1]), ['bitwise', 'bitwise asked for (--mode bitwise)']]);
  });

  it('refuses a negative tolerance or an unknown mode before running anything', () => {
    for (const [args, env, message] of [
      [['--rtol', '-1'], {}, /--rtol must be a finite number >= 0/],
      [['--atol', 'nan'], {}, /--atol must be a finite number >= 0/],
      [[], { CHATGPU_RESUME_CHECK_MODE: 'loose' }, /must be auto, bitwise or tolerance, not 'loose'/],
      [['--mode', 'loose'], {}, /invalid choice: 'loose'/],
    ] as const) {
      const p = project();
      const r = spawnSync(PYTHON, ['-m', 'chatgpu.resume_check', ...args, '--', 'python3 train.py'], {
        cwd: p.dir,
        encoding: 'utf8',
        env: p.env(env),
      });
      expect(r.status).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(existsSync(p.ck)).toBe(false); // the program never ran
    }
  });
});
