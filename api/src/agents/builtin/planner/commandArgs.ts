/**
 * Rule: the command's arguments from the entry point's flags and the request's words. Flags the
 * user wrote (`--emsize 64`, `--lr=0.1`, `--dry-run`) win over every guess; then the run length
 * ("3 epochs", "200 iterations"), the seed, the worker's device (`"$CHATGPU_DEVICE"`, device
 * switches from the worker's accelerator), a number the request gives for a numeric flag, output
 * folders and files into outputs/ (a model file is the run's `checkpoint`), a checkpoint folder the
 * worker keeps and restores (`resumable`). A configurator's overrides are `--key=value`. Required
 * positionals take the number the request gives them (none → the job stops naming the missing
 * value); a script that reads sys.argv itself gets the arguments its README runs it with.
 */
import type { EntryPoint } from '../../planner/analyzeProject.js';
import { flagName, numberBefore, requestFlags, shellWord } from './flags.js';
import { call, type PlannerRule } from './planning.js';
import { usageOf } from './scriptRoles.js';

/** The run directory's checkpoint folder (worker/src/checkpoint.ts's default). */
export const CHECKPOINT_DIR = 'checkpoint';

export const commandArgs: PlannerRule = (p) => {
  const { entry, request, facts, source, hardware, cap } = p;
  const args: string[] = [];
  const num = (re: RegExp) => re.exec(request)?.[1];
  const given = requestFlags(request);
  const wantsModel = /\b(model|checkpoint|weights)\b/i.test(request);
  const accel = hardware.accelVendor;
  if (entry.cli === 'configurator') {
    const c = configuratorArgs(entry, {
      request,
      given,
      configFile: p.configFile,
      settings: p.configSettings,
      source,
      oldTorch: cap.classes.some((k) => k.torchVersions.some((v) => Number.parseInt(v, 10) < 2)),
    });
    args.push(...c.args);
    if (c.checkpoint) {
      p.checkpoint = c.checkpoint;
      if (!c.checkpoint.startsWith('outputs/')) p.outputs.add(c.checkpoint);
    }
  }
  for (const f of entry.cli === 'configurator' ? [] : entry.flags) {
    const name = flagName(f);
    const isBool = f.type === 'bool' || /^store_(true|false)$|BooleanOptionalAction/.test(f.action ?? '');
    const said = given.get(name);
    if (said !== undefined) {
      if (isBool) {
        if (said === true) args.push(f.flag);
      } else if (said !== true) args.push(f.flag, shellWord(said));
      continue;
    }
    if (isBool) {
      // A switch is passed or not, never given a value. Only store_true switches are set here:
      // device switches from the worker's accelerator, a save-the-model switch when the user
      // asks for the model.
      if (f.action === 'store_false' || f.default === 'True') continue;
      const cudaLike = accel === 'nvidia' || accel === 'amd'; // ROCm builds of PyTorch answer to "cuda"
      const on = /^(use-)?(cuda|gpu)$/.test(name)
        ? cudaLike
        : /^(use-)?mps$/.test(name)
          ? accel === 'apple'
          : /^(use-)?accel$/.test(name)
            ? !!accel
            : /^no-(cuda|gpu)$/.test(name)
              ? !cudaLike
              : name === 'no-mps'
                ? accel !== 'apple'
                : /^(no-accel|cpu)$/.test(name)
                  ? !accel
                  : /^save-?model$/.test(name) && wantsModel;
      if (on) args.push(f.flag);
      continue;
    }
    if (/^(num-)?epochs?$/.test(name) && num(/(\d+)\s*epochs?/i)) args.push(f.flag, num(/(\d+)\s*epochs?/i)!);
    else if (/^(num-|max-)?(steps|iters|iterations)$/.test(name) && num(/(\d+)\s*(?:steps|iterations|iters)/i))
      args.push(f.flag, num(/(\d+)\s*(?:steps|iterations|iters)/i)!);
    else if (/^(seed)$/.test(name) && num(/seed\s*(\d+)/i)) args.push(f.flag, num(/seed\s*(\d+)/i)!);
    else if (name === 'device') args.push(f.flag, '"$CHATGPU_DEVICE"');
    else if ((f.type === 'int' || f.type === 'float') && numberBefore(request, name)) args.push(f.flag, numberBefore(request, name)!);
    else if (/^(out|output)-?dir$|^save-dir$|^log-dir$/.test(name)) args.push(f.flag, 'outputs');
    // A folder the script checkpoints into and resumes from: the worker's checkpoint folder,
    // uploaded while it runs and restored before a retry (a drained or lost worker).
    else if (/^(checkpoint|ckpt|resume)-?dir$/.test(name)) {
      args.push(f.flag, CHECKPOINT_DIR);
      p.resumable = { path: CHECKPOINT_DIR, flag: f.flag };
    }
    // A --checkpoint/--ckpt of a script that never saves one is what it reads (an input), not an output.
    // An --out whose default is a folder (`outputs/`, `results`): the outputs folder.
    else if (/^(out|output)$/.test(name) && f.default && !/\.\w+$/.test(f.default.replace(/\/$/, '').split('/').pop()!))
      args.push(f.flag, 'outputs');
    else if (
      /^(save|save-path|out|output|output-path|save-model)$/.test(name) ||
      (/^(checkpoint|ckpt|model-path)$/.test(name) && entry.savesCheckpoint)
    ) {
      const base =
        (f.default ?? 'model.pt')
          .split('/')
          .pop()!
          .replace(/[^\w.-]/g, '') || 'model.pt';
      const file = `outputs/${base}`;
      args.push(f.flag, file);
      // A checkpoint is a model file; other outputs (results.json, a CSV) are only required.
      if (/\.(pt|pth|ckpt|bin|safetensors)$/i.test(base)) p.checkpoint = file;
      else p.resultFiles.push(file);
    }
  }
  // Required positional arguments (`p.add_argument("samples", type=int)`): the number the
  // request gives for it ("with 1000000 samples"), else its only number for the only numeric
  // one; none → say which value is missing rather than run a command argparse refuses.
  const required = entry.cli === 'configurator' ? [] : (entry.positionals ?? []).filter((x) => x.required);
  const numbers = [...request.matchAll(/(?<![\w.-])(\d[\d_]*(?:\.\d+)?)(?![\w.])/g)].map((m) => m[1]!.replace(/_/g, ''));
  const positional: string[] = [];
  for (const x of required) {
    const numeric = x.type === 'int' || x.type === 'float';
    const value = numeric
      ? (numberBefore(request, x.name.replace(/_/g, '-')) ?? (required.length === 1 && numbers.length === 1 ? numbers[0] : undefined))
      : undefined;
    if (value === undefined)
      return call('give_up', {
        reason: `${entry.path} needs its positional argument \`${x.name}\`${x.help ? ` (${x.help})` : ''}, and the request does not give it: say its value, e.g. "with 1000000 ${x.name}".`,
      });
    positional.push(value);
  }
  args.unshift(...positional);
  // A script that reads sys.argv itself (no parser): the arguments its README or pipeline file runs it with.
  const usage = usageOf(facts, entry);
  const usageArgs =
    entry.flags.length === 0 && !(entry.positionals ?? []).length && !usage?.module ? usage?.command.split(/\s+/).slice(2) : undefined;
  if (usageArgs?.length && args.length === 0 && /\bsys\.argv\[[1-9]/.test(source))
    args.push(...usageArgs.filter((a) => /^[\w./=:-]+$/.test(a)));
  p.args = args;
  p.positionals = positional.length;
  return undefined;
};

/**
 * The command-line of a nanoGPT-style script (a configurator: config files, then --key=value
 * overrides of its globals; a value keeps its global's type). The device from the worker, the
 * run length and any setting the request names, torch.compile off on PyTorch before 2.0,
 * intervals no longer than the run (or the checkpoint is never written), out_dir in outputs/.
 */
export function configuratorArgs(
  entry: EntryPoint,
  o: {
    request: string;
    given: Map<string, string | true>;
    configFile: string | null;
    settings: Record<string, string>;
    source: string;
    oldTorch: boolean;
  },
): { args: string[]; checkpoint: string | null } {
  const args: string[] = o.configFile ? [o.configFile] : [];
  const value = (name: string) => o.settings[name] ?? entry.flags.find((f) => f.flag === `--${name}`)?.default ?? null;
  const iters = /(\d[\d_,]*)\s*(?:iterations|iters|steps)\b/i.exec(o.request)?.[1]?.replace(/[_,]/g, '');
  let outDir: string | null = null;
  for (const f of entry.flags) {
    const name = f.flag.slice(2);
    const said = o.given.get(name.replace(/_/g, '-'));
    let v: string | null = null;
    if (typeof said === 'string') v = said;
    else if (name === 'device') v = '"$CHATGPU_DEVICE"';
    else if (name === 'compile' && f.type === 'bool' && o.oldTorch) v = 'False';
    else if (/^(max_iters|max_steps|num_iters|iters|steps)$/.test(name) && iters) v = iters;
    else if (/_interval$/.test(name) && f.type === 'int' && iters && Number(value(name)) > Number(iters)) v = iters;
    else if (OUT_DIR_SETTING.test(name))
      v = `outputs/${
        (value(name) ?? 'out')
          .split('/')
          .pop()!
          .replace(/[^\w.-]/g, '') || 'out'
      }`;
    else if (name === 'seed' && /seed\s*(\d+)/i.test(o.request)) v = /seed\s*(\d+)/i.exec(o.request)![1]!;
    else if ((f.type === 'int' || f.type === 'float') && numberBefore(o.request, name.replace(/_/g, '-')))
      v = numberBefore(o.request, name.replace(/_/g, '-'))!;
    if (v === null) continue;
    if (OUT_DIR_SETTING.test(name)) outDir = v;
    args.push(`--${name}=${v.startsWith('"') ? v : shellWord(v)}`);
  }
  const saved = /torch\.save\([^\n]*os\.path\.join\(\s*(\w+)\s*,\s*['"]([^'"]+\.(?:pt|pth|ckpt|bin))['"]\s*\)/.exec(o.source);
  const checkpoint = saved && outDir && OUT_DIR_SETTING.test(saved[1]!) ? `${outDir}/${saved[2]}` : null;
  return { args, checkpoint };
}

/** A configurator setting naming where a run writes its results (out_dir, checkpoint_dir, …). */
const OUT_DIR_SETTING = /^(out_dir|output_dir|save_dir|ckpt_dir|checkpoint_dir)$/;
