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
