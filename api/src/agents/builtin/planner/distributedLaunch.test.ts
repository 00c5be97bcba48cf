import { describe, expect, it } from 'vitest';
import { CPU_WORKER, entry, NVIDIA_WORKER, runRules } from '../../../../test/helpers/plannerConversation.js';
import { distributedLaunch } from './distributedLaunch.js';

const DDP = [
  'import os, torch, torch.distributed as dist',
  'from torch.nn.parallel import DistributedDataParallel as DDP',
  'def main():',
  '    dist.init_process_group(backend="gloo")',
  '    rank = int(os.environ["RANK"])',
  '    model = DDP(torch.nn.Linear(4, 1))',
  'if __name__ == "__main__":',
  '    main()',
].join('\n');
const flag = (f: string, type = 'int') => ({ flag: f, default: null, type, help: null });
const facts = { usesTorch: true, entryPoints: [entry('train.py', { flags: [flag('--device', 'str')] })] };
const cpu = { ...CPU_WORKER, maxDevices: 0, maxSlotCores: 2 };
const gpus = (n: number) => ({ ...NVIDIA_WORKER, maxDevices: n, maxSlotCores: 16 });

describe('distributedLaunch', () => {
  it('a script that calls init_process_group and reads RANK runs under the launcher on the CPU: one gloo process per core of a slot, and the plan says why', () => {
    const { answer, planning } = runRules(
      { request: 'train it', preference: 'cpu', facts, classes: [cpu], reads: { 'train.py': DDP } },
      distributedLaunch,
    );
    expect(answer).toBeNull();
    expect(planning.command).toBe('python -m chatgpu.torchrun --standalone --nproc_per_node 2 --tee 3 train.py --device "$CHATGPU_DEVICE"');
    expect(planning.launch?.processes).toBe(2);
    expect(planning.launch?.words).toMatch(
      /train\.py calls init_process_group and reads its rank from the launcher's environment.*2 processes — one per CPU core of one worker slot, backend gloo/,
    );
    expect(planning.launch?.words).toMatch(/metrics are rank 0's/);
  });

  it("the README's torchrun line on an NVIDIA network: one process per GPU of one worker; the submitted plan carries the count as hardware.devices and says it", () => {
    const readme = '# Train\n\n```\ntorchrun --nproc_per_node=4 train.py\n```\n';
    const source = DDP.replace('rank = int(os.environ["RANK"])', 'pass');
    const { answer, planning } = runRules({
      request: 'train it',
      facts,
      classes: [cpu, gpus(2)],
      reads: { 'train.py': source, 'README.md': readme },
    });
    expect(answer?.name).toBe('submit_plan');
    const plan = answer!.args as { command: string; summary: string; hardware: { devices?: number; workload: string } };
    expect(plan.hardware).toMatchObject({ workload: 'torch-cuda', devices: 2 });
    expect(plan.command).toBe('python -m chatgpu.torchrun --standalone --nproc_per_node 2 --tee 3 train.py --device "$CHATGPU_DEVICE"');
    expect(plan.summary).toMatch(/its README launches it with `torchrun`/);
    expect(plan.summary).toMatch(
      /The README asks for 4 processes, but one worker has at most 2 NVIDIA GPUs: multi-node \(several workers\) training is not supported, so it runs 2 processes on one worker\./,
    );
    expect(planning.bounded).toMatch(/^python -m chatgpu\.torchrun --standalone --nproc_per_node 2 --tee 3 train\.py/);
  });

  it('reads the README first when the code distributes, and takes fewer processes when the request asks for fewer', () => {
    const first = runRules(
      { request: 'train it', facts, classes: [gpus(8)], files: ['README.md'], reads: { 'train.py': DDP } },
      distributedLaunch,
    );
    expect(first.answer).toEqual({ name: 'read_file', args: { path: 'README.md' } });
    const { planning } = runRules(
      {
        request: 'train it on 2 GPUs',
        preference: 'nvidia',
        facts,
        classes: [gpus(8)],
        reads: { 'train.py': DDP, 'README.md': 'python -m torch.distributed.run --nproc_per_node 8 train.py\n' },
      },
      distributedLaunch,
    );
    expect(planning.command).toBe('python -m chatgpu.torchrun --standalone --nproc_per_node 2 --tee 3 train.py --device "$CHATGPU_DEVICE"');
    expect(planning.launch?.words).toMatch(/The request asks for 2 processes\./);
  });

  it('a package run as a module and a script run from its folder keep how they start', () => {
    const usage = [{ file: 'README.md', command: 'python -m pkg.train', script: 'pkg/train.py', module: 'pkg.train' }];
    const { planning } = runRules(
      {
        request: 'train it',
        facts: { usesTorch: true, usage, entryPoints: [entry('pkg/train.py')] },
        classes: [cpu],
        reads: { 'pkg/train.py': DDP },
      },
      distributedLaunch,
    );
    expect(planning.command).toBe('python -m chatgpu.torchrun --standalone --nproc_per_node 2 --tee 3 -m pkg.train');
  });

  it('leaves alone a script that is not launched (no launcher in its README, or one that spawns its own processes)', () => {
    const plain = runRules(
      { request: 'train it', facts, classes: [cpu], reads: { 'train.py': 'import torch\nprint(torch.ones(2))\n' } },
      distributedLaunch,
    );
    expect(plain.planning.command).toBe('python train.py --device "$CHATGPU_DEVICE"');
    expect(plain.planning.launch).toBeNull();
    const spawns = runRules(
      {
        request: 'train it',
        facts,
        classes: [cpu],
        reads: { 'train.py': `${DDP}\nimport torch.multiprocessing as mp\nmp.spawn(main, nprocs=2)\n` },
      },
      distributedLaunch,
    );
    expect(spawns.planning.command).toBe('python train.py --device "$CHATGPU_DEVICE"');
  });

  it('a script that hard-codes NCCL on a CPU-only network: the job stops naming the line and the fix', () => {
    const { answer } = runRules(
      { request: 'train it', facts, classes: [cpu], reads: { 'train.py': DDP.replace('backend="gloo"', '"nccl"') } },
      distributedLaunch,
    );
    expect(answer?.name).toBe('give_up');
    expect(answer?.args.reason).toMatch(
      /^train\.py:4 hard-codes the NCCL backend .* a CPU worker .*"nccl" if torch\.cuda\.is_available\(\) else "gloo"/,
    );
  });
});

describe('distributedLaunch: a script that also runs alone (nanoGPT-style)', () => {
  const NANO = [
    'import os, torch',
    'from torch.distributed import init_process_group, destroy_process_group',
    "backend = 'nccl'",
    "ddp = int(os.environ.get('RANK', -1)) != -1",
    'if ddp:',
    '    init_process_group(backend=backend)',
    '    device = f\'cuda:{int(os.environ["LOCAL_RANK"])}\'',
    '    torch.cuda.set_device(device)',
  ].join('\n');
  const readme =
    'python train.py config/train_shakespeare_char.py\n\ntorchrun --standalone --nproc_per_node=8 train.py config/train_gpt2.py\n';
  it('on the CPU it runs as one process, and the plan says why', () => {
    const { answer, planning } = runRules(
      { request: 'train it', facts, classes: [cpu], reads: { 'train.py': NANO, 'README.md': readme } },
      distributedLaunch,
    );
    expect(answer).toBeNull();
    expect(planning.command).toBe('python train.py --device "$CHATGPU_DEVICE"');
    expect(planning.launch).toEqual({
      processes: 1,
      words: expect.stringMatching(
        /runs alone when the launcher's RANK is unset: it runs as one process, on the CPU several processes would share the same cores/,
      ),
    });
  });
  it('on a worker with several GPUs it is launched with one process per GPU', () => {
    const { planning } = runRules(
      { request: 'train it', facts, classes: [gpus(4)], reads: { 'train.py': NANO, 'README.md': readme } },
      distributedLaunch,
    );
    expect(planning.command).toBe('python -m chatgpu.torchrun --standalone --nproc_per_node 4 --tee 3 train.py --device "$CHATGPU_DEVICE"');
    expect(planning.launch?.words).toMatch(
      /4 processes — one per NVIDIA GPU of one worker.* The README asks for 8 processes, but one worker has at most 4 NVIDIA GPUs: multi-node/,
    );
  });
});
