/**
 * Rule: a distributed (DDP) training script runs under PyTorch's launcher, on ONE worker, with one
 * process per device of the chosen class (docs/launchers.md). A project is distributed when its
 * README runs the entry point with `torchrun`, `python -m torch.distributed.run`/`.launch` or
 * `accelerate launch`, or when the entry point calls `init_process_group` and reads the launcher's
 * LOCAL_RANK/RANK/WORLD_SIZE (not a script that spawns its own processes with mp.spawn). Its
 * command becomes `python -m chatgpu.torchrun --standalone --nproc_per_node N --tee 3 SCRIPT ARGS`
 * (torch.distributed.run's flags; the worker's shim makes them work on every torch it has):
 * N = the GPUs one worker of the chosen vendor has, or on the CPU the cores of one slot (gloo);
 * fewer when the README or the request asks for fewer (a script that runs alone when RANK is unset,
 * like nanoGPT's, is launched only on several GPUs: on the CPU or one GPU it runs as one process, and
 * the plan says why); when they ask for more than one worker has,
 * the plan says so — multi-node runs are not supported — and runs on one worker's devices. `--tee 3`
 * prefixes every rank's lines with `[default<rank>]:` (the ranks' logs kept apart) and the worker
 * takes metrics from rank 0's lines only (worker/src/metricLine.ts). A script that hard-codes the
 * NCCL backend cannot run on a CPU (or Apple) worker: the job stops saying so and how to choose the
 * backend by device — the CUDA→device-agnostic migration reports NCCL as a hazard, it does not
 * rewrite it. Runs after startCommand (it rewrites its runner) and before smokeRun (whose bounded
 * command uses the runner).
 */
import { call, type PlannerRule } from './planning.js';

/** The launcher PyTorch ships (torchrun is its console script), through the worker's shim (worker/python/chatgpu/torchrun.py). */
export const TORCHRUN = 'python -m chatgpu.torchrun';

const LAUNCH_LINE = /(?:^|[\s`$(])(torchrun|python3?\s+-m\s+torch\.distributed\.(?:run|launch)|accelerate\s+launch)\b([^\n`]*)/g;

export const distributedLaunch: PlannerRule = (p) => {
  const { entry, source, hardware, cap, uploaded, request } = p;
  if (!entry.path.endsWith('.py') || !p.runner) return undefined;
  if (!/\btorch\.distributed\b|\bDistributedDataParallel\b|\binit_process_group\b|\baccelerate\b/.test(source)) return undefined;
  // The README says how the project is launched: read it (only for a project that distributes).
  const readme = [...uploaded].filter((f) => /^README(\.md|\.rst|\.txt)?$/i.test(f)).sort()[0];
  if (readme) {
    const next = p.readCall(readme);
    if (next) return call('read_file', next);
  }
  const base = entry.path.split('/').pop()!;
  const launches = [...(readme ? (p.readOf(readme) ?? '') : '').matchAll(LAUNCH_LINE)];
  const launch = launches.find((m) => m[2]!.includes(base)) ?? launches[0];
  const envRanks =
    /\binit_process_group\s*\(/.test(source) && /\b(LOCAL_RANK|WORLD_SIZE|RANK)\b/.test(source) && !/\bspawn\s*\(/.test(source);
  if (!launch && !envRanks) return undefined;
  // A script that runs alone when the launcher's RANK is unset (nanoGPT: `ddp = int(os.environ.get('RANK', -1)) != -1`)
  // is launched only where several processes pay: on several GPUs. On the CPU they would share one slot's cores.
  const alone =
    /os\.environ\.get\(\s*['"](?:LOCAL_)?RANK['"]|['"](?:LOCAL_)?RANK['"]\s+(?:not\s+)?in\s+os\.environ|os\.getenv\(\s*['"](?:LOCAL_)?RANK['"]/.test(
      source,
    );

  const vendor = hardware.accelVendor;
  const onGpu = vendor === 'nvidia' || vendor === 'amd';
  const line = (re: RegExp) => source.split('\n').findIndex((l) => re.test(l)) + 1;
  const nccl = line(/init_process_group\s*\(\s*(?:backend\s*=\s*)?["']nccl["']/);
  if (nccl && vendor !== 'nvidia' && vendor !== 'amd') {
    return call('give_up', {
      reason:
        `${entry.path}:${nccl} hard-codes the NCCL backend (init_process_group("nccl")), which needs NVIDIA or AMD GPUs, and this job runs on ${vendor === 'apple' ? 'an Apple' : 'a CPU'} worker (online: ${cap.summary}). ` +
        'Choose the backend by device — e.g. init_process_group("nccl" if torch.cuda.is_available() else "gloo") — and submit again, or run it when a GPU worker is online.',
    });
  }
  // One process per device of the chosen class on ONE worker.
  const have =
    onGpu || vendor === 'apple'
      ? Math.max(1, ...cap.classes.filter((c) => c.accelVendor === vendor).map((c) => c.maxDevices ?? 1))
      : Math.max(1, ...cap.classes.filter((c) => c.workloads.includes(hardware.workload)).map((c) => c.maxSlotCores ?? 1));
  const readmeAsks = launch ? /--(?:nproc[_-]per[_-]node|num[_-]processes)[=\s]+(\d+)/.exec(launch[2]!)?.[1] : undefined;
  const requestAsks = /\b(\d+)\s*(?:GPUs|processes|ranks|devices)\b/i.exec(request)?.[1];
  const asked = requestAsks ? Number(requestAsks) : readmeAsks ? Number(readmeAsks) : null;
  const n = vendor === 'apple' ? 1 : asked ? Math.max(1, Math.min(asked, have)) : have;
  if (alone && (!onGpu || n < 2)) {
    p.launch = {
      processes: 1,
      words: `${entry.path} can run distributed (${launch ? `its README launches it with \`${launch[1]!.replace(/\s+/g, ' ')}\`` : 'it calls init_process_group'}), and runs alone when the launcher's RANK is unset: it runs as one process, ${onGpu ? `one worker has one ${vendor === 'nvidia' ? 'NVIDIA' : 'AMD'} GPU` : 'on the CPU several processes would share the same cores'}.`,
    };
    return undefined;
  }
  const device = onGpu ? `${vendor === 'nvidia' ? 'NVIDIA' : 'AMD'} GPU` : vendor === 'apple' ? 'Apple GPU' : 'CPU core';
  const how = launch
    ? `its README launches it with \`${launch[1]!.replace(/\s+/g, ' ')}\``
    : `${entry.path} calls init_process_group and reads its rank from the launcher's environment (LOCAL_RANK/RANK/WORLD_SIZE)`;
  const why =
    asked && asked > have
      ? ` ${requestAsks ? 'The request' : 'The README'} asks for ${asked} processes, but one worker has at most ${have} ${device}${have > 1 ? 's' : ''}: multi-node (several workers) training is not supported, so it runs ${n} process${n > 1 ? 'es' : ''} on one worker.`
      : asked && asked < have
        ? ` ${requestAsks ? 'The request' : 'The README'} asks for ${asked} process${asked > 1 ? 'es' : ''}.`
        : '';
  const backend = onGpu
    ? `${vendor === 'amd' ? 'RCCL (NCCL on ROCm)' : 'NCCL'} or gloo, as the script chooses`
    : vendor === 'apple'
      ? 'gloo (one process: MPS has one device)'
      : 'gloo';
  p.launch = {
    processes: n,
    words: `It is distributed training (${how}): it runs with PyTorch's launcher, ${n} process${n > 1 ? 'es' : ''} — one per ${device} of one worker${onGpu ? '' : vendor === 'apple' ? '' : ' slot'}, backend ${backend} —${why} Each rank's output is kept apart (prefixed [default<rank>]:) and the metrics are rank 0's.`,
  };
  const flags = `--standalone --nproc_per_node ${n} --tee 3`;
  // The runner's `python SCRIPT` / `python -m MODULE` (after any `cd DIR && PYTHONPATH=… `) goes through the launcher.
  p.runner = p.runner.replace(/\bpython (-m )?(?=\S+$)/, (_, m: string | undefined) => `${TORCHRUN} ${flags} ${m ? '-m ' : ''}`);
  p.command = [p.runner, ...p.args].join(' ');
  return undefined;
};
