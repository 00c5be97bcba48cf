/**
 * The kill-and-resume check's tolerance mode as the preparation stage uses it: the candidate run of a
 * checkpoint-resume step carries the step's numeric tolerance (candidateRun → resumeCheckCommand:
 * --rtol/--atol), the real check run with that command under `sh -c` in a task-like folder writes a
 * report in tolerance mode, and the record's words (describeResumeCheck) say "equal within rtol=…,
 * atol=… (why)" where a deterministic run says "bitwise equal". CUDA itself is not run here (no GPU):
 * the device's mode is decided from what chatgpu.resume records (worker/python/resume.test.ts).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { candidateRun, describeResumeCheck, type ResumeCheckReport } from '../src/domain/preparation/resumeCheck.js';
import { RESUME_CHECK_REPORT, resumeCheckCommand } from '../src/preparation/checkpointResume.js';
import { inRepo } from '../src/paths.js';
import { torchPython } from './preparation/toolchain.js';

const BASE: ResumeCheckReport = {
  equal: true,
  uninterrupted: { exitCode: 0, steps: 6 },
  killed: { afterStep: 3, signal: 'SIGKILL' },
  resumed: { atStep: 3 },
  compared: { stateEntries: 27, outputFiles: 1, lossLines: 6 },
  differences: [],
};

describe('the kill-and-resume check: bitwise or within the job tolerance', () => {
  it('the candidate run carries the step tolerance to the check; without one, the command is as before', () => {
    const step = { transformation: 'checkpoint-resume', tolerance: { rtol: 1e-4, atol: 1e-6 } };
    expect(candidateRun(step, 'python train.py --epochs 2')).toEqual({
      command: `python -m chatgpu.resume_check --report ${RESUME_CHECK_REPORT} --rtol 1e-4 --atol 1e-6 -- 'python train.py --epochs 2'`,
      role: 'RESUME_CHECK',
      timeoutFactor: 3,
      outputs: [RESUME_CHECK_REPORT],
    });
    expect(candidateRun({ transformation: 'checkpoint-resume', tolerance: { atol: 0 } }, 'python t.py').command).toBe(
      `python -m chatgpu.resume_check --report ${RESUME_CHECK_REPORT} --atol 0 -- 'python t.py'`,
    );
    expect(candidateRun({ transformation: 'checkpoint-resume' }, 'python t.py').command).toBe(resumeCheckCommand('python t.py'));
    expect(resumeCheckCommand('python t.py', null)).toBe(`python -m chatgpu.resume_check --report ${RESUME_CHECK_REPORT} -- 'python t.py'`);
    // Another step's candidate runs the workload itself.
    expect(candidateRun({ transformation: 'cuda-to-hip', tolerance: { rtol: 1e-4 } }, 'python t.py')).toEqual({
      command: 'python t.py',
      role: 'CANDIDATE',
    });
  });

  it('the record says how the runs were compared: bitwise, or within rtol/atol with the reason and the largest difference', () => {
    expect(describeResumeCheck({ ...BASE, mode: 'bitwise', modeReason: 'device cpu: deterministic' })).toMatch(
      /^killed with SIGKILL after step 3 of 6 and resumed in a fresh process at step 3, the run ended bitwise equal to the uninterrupted one: final state \(27 entries/,
    );
    // A report of before the modes (no mode) reads as it did.
    expect(describeResumeCheck(BASE)).toContain('the run ended bitwise equal to the uninterrupted one');
    const cuda: ResumeCheckReport = {
      ...BASE,
      mode: 'tolerance',
      modeReason: 'device cuda: non-deterministic kernels',
      tolerance: { rtol: 1e-4, atol: 1e-6, source: 'job' },
      largestDifferences: {
        state: { at: 'objects.model.state_dict.weight', absolute: 3.2e-7, relative: 1e-6 },
        losses: { at: 'loss line 4, number 2', absolute: 4.1e-6, relative: 2e-5 },
      },
    };
    expect(describeResumeCheck(cuda)).toContain(
      'the run ended equal within rtol=1e-4, atol=1e-6 (device cuda: non-deterministic kernels; largest difference 4.10e-6 at loss line 4, number 2) to the uninterrupted one',
    );
    expect(describeResumeCheck({ ...cuda, largestDifferences: {}, tolerance: { rtol: 1.3e-6, atol: 1e-5, source: 'default' } })).toContain(
      "equal within torch.testing's defaults, rtol=1.3e-6, atol=1e-5 (device cuda: non-deterministic kernels; no difference seen)",
    );
    expect(
      describeResumeCheck({
        ...cuda,
        equal: false,
        differences: ['state objects.model.state_dict.weight: beyond rtol=0.0001, atol=1e-06 (largest difference 0.0118, relative 0.0541)'],
      }),
    ).toBe(
      'the kill-and-resume check found the resumed run different (compared within rtol=1e-4, atol=1e-6: device cuda: non-deterministic kernels): state objects.model.state_dict.weight: beyond rtol=0.0001, atol=1e-06 (largest difference 0.0118, relative 0.0541)',
    );
  });

  it('the stage command run for real: a resumed run a little off passes in tolerance mode and its record says so; far off, it fails', async () => {
    const py = (await torchPython()).path;
    const program = `import chatgpu.resume as _chatgpu_resume
import os
import torch
torch.manual_seed(0)
model = torch.nn.Linear(3, 1)
opt = torch.optim.Adam(model.parameters(), lr=0.05)
_chatgpu_run = _chatgpu_resume.Run(objects=dict(model=model, opt=opt), values=lambda: dict())
[] = _chatgpu_run.restore()
if os.environ.get("CHATGPU_RESUME"):
    with torch.no_grad():
        model.bias.add_(float(os.environ["NOISE"]))
for step in _chatgpu_run.loop(range(4)):
    loss = model(torch.randn(8, 3)).pow(2).mean()
    opt.zero_grad(); loss.backward(); opt.step()
    print(f"step {step} loss {loss.item():.6f}", flush=True)
`;
    const run = (noise: string) => {
      const dir = mkdtempSync(path.join(tmpdir(), 'resume-tol-'));
      const bin = path.join(dir, '.bin');
      mkdirSync(bin);
      symlinkSync(py, path.join(bin, 'python'));
      writeFileSync(path.join(dir, 'train.py'), program);
      const { command } = candidateRun({ transformation: 'checkpoint-resume', tolerance: { rtol: 1e-3, atol: 1e-5 } }, 'python train.py');
      const r = spawnSync('sh', ['-c', command], {
        cwd: dir,
        encoding: 'utf8',
        timeout: 180_000,
        // The operator's switch stands in for a CUDA device here (no GPU on this machine).
        env: {
          PATH: `${bin}:/usr/bin:/bin`,
          PYTHONPATH: inRepo('worker/python'),
          HOME: dir,
          NOISE: noise,
          CHATGPU_RESUME_CHECK_MODE: 'tolerance',
        },
      });
      return {
        code: r.status,
        out: r.stdout + r.stderr,
        report: JSON.parse(readFileSync(path.join(dir, RESUME_CHECK_REPORT), 'utf8')) as ResumeCheckReport,
      };
    };
    const near = run('1e-6');
    expect(near.code, near.out).toBe(0);
    expect(near.report).toMatchObject({ equal: true, mode: 'tolerance', tolerance: { rtol: 1e-3, atol: 1e-5, source: 'job' } });
    expect(near.out).toMatch(
      /chatgpu\.resume_check: equal: .* equal within rtol=0\.001, atol=1e-05 \(tolerance asked for \(--mode tolerance\)\)/,
    );
    expect(describeResumeCheck(near.report)).toMatch(
      /the run ended equal within rtol=0\.001, atol=1e-5 \(tolerance asked for \(--mode tolerance\); largest difference [\d.]+e-\d+ at [^)]+\) to the uninterrupted one/,
    );
    const far = run('0.5');
    expect(far.code).toBe(1);
    expect(far.report).toMatchObject({ equal: false, mode: 'tolerance' });
    expect(describeResumeCheck(far.report)).toMatch(
      /^the kill-and-resume check found the resumed run different \(compared within rtol=0\.001, atol=1e-5: tolerance asked for \(--mode tolerance\)\): state objects\.model\.state_dict\.bias: beyond rtol=0\.001, atol=1e-05/,
    );
  });
});
