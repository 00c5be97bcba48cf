/**
 * The optimization candidates for PyTorch training code (issue 6, item 4), one rule each. A rule
 * first says whether the target and the worker's runtime allow it (`fits`), then looks at the code
 * (`plan`): either why it does not apply there, or the splices to make per file. Rules read CPython's
 * AST (pySource.ts) and splice at exact node offsets, so everything outside the edits is
 * byte-identical. Each rule recognises its own output (and the usual hand-written forms of the same
 * optimization) as "already optimized", so applying a candidate twice changes nothing.
 *
 * optimize.ts turns rules into transformations and candidates; this file only decides and edits.
 */
import type { ComparisonCriteria } from './compareOutputs.js';
import { isNode, type PyNode } from './pythonAst.js';
import {
  afterImportsOffset,
  ancestors,
  dotted,
  hasMainGuard,
  hasStarStar,
  indentOf,
  indentUnit,
  keyword,
  lineEndOf,
  lineStartOf,
  qualify,
  text,
  torchName,
  type PyFile,
  type Splice,
} from './pySource.js';
import type { Hazard, TransformContext } from './types.js';

/** How far a candidate can move results: none (bitwise the same), low (last bits: algorithm choice, fusion), medium (TF32), high (16-bit floats). */
export type NumericalRisk = 'none' | 'low' | 'medium' | 'high';

export const OPTIMIZATION_NAMES = [
  'cudnn-benchmark',
  'matmul-precision-high',
  'autocast-bf16',
  'autocast-fp16',
  'dataloader-workers',
  'pin-memory',
  'persistent-workers',
  'torch-compile',
  'channels-last',
] as const;
export type OptimizationName = (typeof OPTIMIZATION_NAMES)[number];

export interface FilePlan {
  splices: Splice[];
  hazards: Hazard[];
}
export type Plan = { skip: string } | { files: Record<string, FilePlan>; notes: string[] };

export interface OptimizationRule {
  name: OptimizationName;
  title: string;
  /** What it is expected to speed up. */
  benefit: string;
  risk: NumericalRisk;
  /** Tolerances to compare its outputs with the accepted code's (null: the comparison defaults). */
  criteria: ComparisonCriteria | null;
  /** Null when the target and runtime allow the candidate, else why not. */
  fits(ctx: TransformContext): string | null;
  plan(files: readonly PyFile[], ctx: TransformContext): Plan;
}

// ---------------------------------------------------------------- versions and hardware

export function parseVersion(v: string | undefined): [number, number] | null {
  const m = v ? /^(\d+)\.(\d+)/.exec(v) : null;
  return m ? [Number(m[1]), Number(m[2])] : null;
}
const atLeast = (v: [number, number], min: [number, number]): boolean => v[0] > min[0] || (v[0] === min[0] && v[1] >= min[1]);

/** NVIDIA compute capability from `computeCapability` ("8.6") or `gpuArch` ("sm_86", "sm_90a", "8.6"). */
export function computeCapability(ctx: TransformContext): [number, number] | null {
  const cc = parseVersion(ctx.runtime?.computeCapability);
  if (cc) return cc;
  const arch = ctx.runtime?.gpuArch ?? '';
  const sm = /^(?:sm_|compute_)(\d+)(\d)[a-z]?$/.exec(arch);
  if (sm) return [Number(sm[1]), Number(sm[2])];
  return parseVersion(arch);
}

/** Why the worker's PyTorch is not new enough (null when it is). Unknown counts as "not known to be". */
function needsTorch(ctx: TransformContext, min: [number, number], what: string): string | null {
  const v = parseVersion(ctx.runtime?.torch);
  if (!v) return `the worker's PyTorch version is unknown (${what} needs PyTorch ≥ ${min.join('.')})`;
  return atLeast(v, min) ? null : `the worker runs PyTorch ${ctx.runtime!.torch} (${what} needs ≥ ${min.join('.')})`;
}

function needsAmpere(ctx: TransformContext, what: string): string | null {
  const cc = computeCapability(ctx);
  if (!cc) return `the worker's GPU architecture is unknown (${what} needs NVIDIA Ampere, sm_80 or newer)`;
  return cc[0] >= 8 ? null : `the worker's GPU is sm_${cc.join('')} (${what} needs Ampere, sm_80 or newer)`;
}

/** AMD architectures with bf16 matrix instructions (CDNA2 and newer). */
const AMD_BF16 = /^gfx(90a|94\d|95\d)/;

// ---------------------------------------------------------------- code facts

const CONV_ANY = /^torch\.nn\.(?:functional\.)?(?:Conv[123]d|ConvTranspose[123]d|LazyConv[123]d|conv[123]d|conv_transpose[123]d)$/;
const CONV_2D = /^torch\.nn\.(?:functional\.)?(?:Conv2d|ConvTranspose2d|LazyConv2d|conv2d|conv_transpose2d)$/;
const MATMUL =
  /^torch\.(?:nn\.(?:Linear|LazyLinear|Bilinear|Conv[123]d|ConvTranspose[123]d|LSTM|GRU|RNN|LSTMCell|GRUCell|MultiheadAttention|Transformer\w*|functional\.(?:linear|conv[123]d|scaled_dot_product_attention))|matmul|mm|bmm|einsum|addmm|baddbmm|tensordot)$/;
const DATALOADER = new Set(['torch.utils.data.DataLoader', 'torch.utils.data.dataloader.DataLoader']);

function refs(f: PyFile, pattern: RegExp): PyNode[] {
  return f.nodes.filter(
    (n) => (n._t === 'Attribute' || n._t === 'Name') && f.parents.get(n)?._t !== 'Attribute' && pattern.test(qualify(f, n) ?? ''),
  );
}

function calls(f: PyFile, pred: (q: string | null, call: PyNode) => boolean): PyNode[] {
  return f.nodes.filter((n) => n._t === 'Call' && pred(qualify(f, n.func), n));
}

/** Assignments `target = value` whose target qualifies to `name` (`torch.backends.cudnn.benchmark`). */
function assignmentsTo(f: PyFile, name: string): PyNode[] {
  return f.nodes.filter((n) => n._t === 'Assign' && (n.targets as PyNode[]).some((t) => qualify(f, t) === name));
}

const isTrue = (n: unknown): boolean => isNode(n) && n._t === 'Constant' && n.value === true;
const isFalse = (n: unknown): boolean => isNode(n) && n._t === 'Constant' && n.value === false;
const importsTorch = (f: PyFile): boolean => [...f.aliases.values()].some((q) => q === 'torch' || q.startsWith('torch.'));

/** Files where process-wide setup goes: the entry points (a `__main__` guard) that use torch, else the files that triggered the rule. */
function setupFiles(files: readonly PyFile[], triggered: readonly PyFile[]): PyFile[] {
  const entries = files.filter((f) => hasMainGuard(f) && importsTorch(f));
  return entries.length > 0 ? entries : [...triggered];
}

/** A module-level statement after the imports (and after the migration prelude), importing torch when the file has no name for it. */
function setupSplice(f: PyFile, statement: (torch: string) => string, rule: string): Splice {
  const t = torchName(f);
  const at = afterImportsOffset(f);
  const lines = `${t ? '' : 'import torch\n'}${statement(t ?? 'torch')}\n`;
  const prevBlank = at === 0 || f.src.slice(0, at).endsWith('\n\n');
  return { s: at, e: at, text: `${prevBlank ? '' : '\n'}${lines}`, rule };
}

/** Inserts a line after a statement, at its indentation. */
function lineAfter(f: PyFile, st: PyNode, line: string, rule: string, ind: string): Splice {
  const end = lineEndOf(f.src, st.e!);
  const nl = f.src[end - 1] === '\n' ? '' : '\n';
  return { s: end, e: end, text: `${nl}${ind}${line}\n`, rule };
}

/** True when nothing but a comment follows the statement on its last line (no `a; b`). */
function endsItsLine(f: PyFile, st: PyNode): boolean {
  return /^[ \t]*(#[^\n]*)?(\n|$)/.test(f.src.slice(st.e!, lineEndOf(f.src, st.e!)));
}

/** nn.Module subclasses defined in the tree (by class name), and which of them hold 2-D convolutions. */
interface ModuleClasses {
  modules: Set<string>;
  conv2d: Set<string>;
  /** Conv classes whose methods call `.view(…)` (fails on channels-last activations). */
  views: Set<string>;
}

function moduleClasses(files: readonly PyFile[]): ModuleClasses {
  const classes: Array<{ f: PyFile; node: PyNode; name: string; bases: string[]; uses: Set<string> }> = [];
  for (const f of files) {
    for (const n of f.nodes) {
      if (n._t !== 'ClassDef') continue;
      const bases = (n.bases as PyNode[]).map((b) => qualify(f, b) ?? dotted(b) ?? '');
      const uses = new Set<string>();
      for (const x of f.nodes) {
        if (x === n || x.s === undefined || x.s < n.s! || x.e! > n.e!) continue;
        if (x._t === 'Name') uses.add(x.id as string);
        const q = x._t === 'Attribute' || x._t === 'Name' ? qualify(f, x) : null;
        if (q) uses.add(q);
      }
      classes.push({ f, node: n, name: n.name as string, bases, uses });
    }
  }
  const last = (q: string): string => q.split('.').pop()!;
  const modules = new Set<string>();
  let grew = true;
  while (grew) {
    grew = false;
    for (const c of classes) {
      if (modules.has(c.name)) continue;
      if (
        c.bases.some(
          (b) => /^torch\.nn\.(?:modules\.module\.)?(?:Module|Sequential|ModuleList|ModuleDict)$/.test(b) || modules.has(last(b)),
        )
      ) {
        modules.add(c.name);
        grew = true;
      }
    }
  }
  const conv2d = new Set<string>();
  grew = true;
  while (grew) {
    grew = false;
    for (const c of classes) {
      if (!modules.has(c.name) || conv2d.has(c.name)) continue;
      if ([...c.uses].some((u) => CONV_2D.test(u) || (u !== c.name && conv2d.has(last(u))))) {
        conv2d.add(c.name);
        grew = true;
      }
    }
  }
  const views = new Set<string>();
  for (const c of classes) {
    if (!conv2d.has(c.name)) continue;
    const hasView = c.f.nodes.some(
      (x) =>
        x._t === 'Call' && x.s! >= c.node.s! && x.e! <= c.node.e! && isNode(x.func) && x.func._t === 'Attribute' && x.func.attr === 'view',
    );
    if (hasView) views.add(c.name);
  }
  return { modules, conv2d, views };
}

interface ModelAssignment {
  st: PyNode;
  name: string;
  cls: string;
  ind: string;
}

/**
 * `model = Net(...)` (optionally `.to(device)` / `.cuda()` …) where Net is an nn.Module class of the
 * tree (or torch.nn.Sequential / a torchvision model) and `model.parameters()` is used in the same
 * file: the model being trained.
 */
function modelAssignments(f: PyFile, classes: ModuleClasses): ModelAssignment[] {
  const out: ModelAssignment[] = [];
  for (const st of f.nodes) {
    if (st._t !== 'Assign' || (st.targets as PyNode[]).length !== 1) continue;
    const target = (st.targets as PyNode[])[0]!;
    if (target._t !== 'Name') continue;
    let v = st.value as PyNode;
    while (
      v._t === 'Call' &&
      isNode(v.func) &&
      v.func._t === 'Attribute' &&
      ['to', 'cuda', 'float', 'train', 'cpu'].includes(v.func.attr as string)
    )
      v = v.func.value as PyNode;
    if (v._t !== 'Call') continue;
    const q = qualify(f, v.func) ?? dotted(v.func) ?? '';
    const cls = q.split('.').pop()!;
    const known = classes.modules.has(cls) || q === 'torch.nn.Sequential' || q.startsWith('torchvision.models.');
    if (!known) continue;
    const name = target.id as string;
    const trained = f.nodes.some(
      (n) =>
        n._t === 'Call' && isNode(n.func) && n.func._t === 'Attribute' && n.func.attr === 'parameters' && dotted(n.func.value) === name,
    );
    const ind = indentOf(f, st);
    if (!trained || ind === null || !endsItsLine(f, st)) continue;
    out.push({ st, name, cls: q.startsWith('torchvision.models.') ? q : cls, ind });
  }
  return out;
}

const planFrom = (files: Record<string, FilePlan>, notes: string[], skip: string): Plan =>
  Object.values(files).some((p) => p.splices.length > 0) ? { files, notes } : { skip };

const hazard = (f: PyFile, n: PyNode, severity: Hazard['severity'], rule: string, what: string, why: string, fix: string): Hazard => ({
  file: f.path,
  line: n.l ?? 1,
  severity,
  rule,
  what,
  why,
  fix,
});

// ---------------------------------------------------------------- criteria

const LOW: ComparisonCriteria = {
  tolerances: { float32: { rtol: 1e-4, atol: 1e-5 } },
  metrics: { default: { rtol: 1e-4, atol: 1e-5 } },
};
const TF32: ComparisonCriteria = {
  tolerances: { float32: { rtol: 1e-2, atol: 1e-3 } },
  metrics: { default: { rtol: 1e-2, atol: 1e-3 } },
};
const BF16: ComparisonCriteria = {
  tolerances: { float32: { rtol: 5e-2, atol: 2e-2 }, bfloat16: { rtol: 5e-2, atol: 2e-2 } },
  metrics: { default: { rtol: 5e-2, atol: 2e-2 } },
};
const FP16: ComparisonCriteria = {
  tolerances: { float32: { rtol: 2e-2, atol: 1e-2 }, float16: { rtol: 2e-2, atol: 1e-2 } },
  metrics: { default: { rtol: 2e-2, atol: 1e-2 } },
};

// ---------------------------------------------------------------- the rules

/** Process-wide flags set once after the imports of the entry script. */
function setupFlagRule(opts: {
  name: OptimizationName;
  title: string;
  benefit: string;
  risk: NumericalRisk;
  criteria: ComparisonCriteria | null;
  fits: (ctx: TransformContext) => string | null;
  trigger: (f: PyFile) => boolean;
  noTrigger: string;
  /** Why the code already decided (null: it did not). */
  decided: (f: PyFile) => string | null;
  statement: (torch: string) => string;
  note: string | null;
}): OptimizationRule {
  return {
    name: opts.name,
    title: opts.title,
    benefit: opts.benefit,
    risk: opts.risk,
    criteria: opts.criteria,
    fits: opts.fits,
    plan(files) {
      const triggered = files.filter(opts.trigger);
      if (triggered.length === 0) return { skip: opts.noTrigger };
      for (const f of files) {
        const why = opts.decided(f);
        if (why) return { skip: `${f.path}: ${why}` };
      }
      const plan: Record<string, FilePlan> = {};
      for (const f of setupFiles(files, triggered)) plan[f.path] = { splices: [setupSplice(f, opts.statement, opts.name)], hazards: [] };
      return planFrom(plan, opts.note ? [opts.note] : [], opts.noTrigger);
    },
  };
}

const cudnnBenchmark = setupFlagRule({
  name: 'cudnn-benchmark',
  title: 'torch.backends.cudnn.benchmark = True',
  benefit:
    'cuDNN/MIOpen time the convolution algorithms for each input shape once and keep the fastest (fixed shapes: faster convolutions).',
  risk: 'low',
  criteria: LOW,
  fits: (ctx) =>
    ctx.target === 'cuda' || ctx.target === 'rocm'
      ? null
      : `convolution autotuning exists only on CUDA and ROCm workers (target ${ctx.target})`,
  trigger: (f) => refs(f, CONV_ANY).length > 0,
  noTrigger: 'no convolution layers: nothing for cuDNN to autotune',
  decided: (f) => {
    for (const a of assignmentsTo(f, 'torch.backends.cudnn.benchmark')) {
      return isTrue(a.value) ? 'already sets cudnn.benchmark = True' : `sets cudnn.benchmark explicitly (line ${a.l})`;
    }
    if (assignmentsTo(f, 'torch.backends.cudnn.deterministic').some((a) => isTrue(a.value)))
      return 'asks for deterministic cuDNN algorithms; autotuning would undo that';
    if (calls(f, (q, c) => q === 'torch.use_deterministic_algorithms' && isTrue((c.args as PyNode[])[0])).length)
      return 'asks for deterministic algorithms; autotuning would undo that';
    return null;
  },
  statement: (t) => `${t}.backends.cudnn.benchmark = True`,
  note: 'cudnn.benchmark picks convolution algorithms by timing: another algorithm sums in another order, so results differ in the last bits (and between runs).',
});

const matmulPrecision = setupFlagRule({
  name: 'matmul-precision-high',
  title: 'torch.set_float32_matmul_precision("high") (TF32)',
  benefit: 'float32 matrix multiplications use TF32 tensor cores on Ampere+ (several times the float32 throughput).',
  risk: 'medium',
  criteria: TF32,
  fits: (ctx) => {
    if (ctx.target !== 'cuda') return `TF32 is an NVIDIA Ampere+ feature (target ${ctx.target})`;
    return needsTorch(ctx, [1, 12], 'torch.set_float32_matmul_precision') ?? needsAmpere(ctx, 'TF32');
  },
  trigger: (f) => refs(f, MATMUL).length > 0 || f.nodes.some((n) => n._t === 'BinOp' && (n.op as PyNode)._t === 'MatMult'),
  noTrigger: 'no matrix multiplications (Linear, convolutions, matmul, RNNs, attention)',
  decided: (f) => {
    const set = calls(f, (q) => q === 'torch.set_float32_matmul_precision')[0];
    if (set) return `already chooses the matmul precision (line ${set.l})`;
    const tf32 = assignmentsTo(f, 'torch.backends.cuda.matmul.allow_tf32')[0];
    if (tf32) return `already sets torch.backends.cuda.matmul.allow_tf32 (line ${tf32.l})`;
    return null;
  },
  statement: (t) => `${t}.set_float32_matmul_precision("high")`,
  note: 'TF32 matmuls keep 10 mantissa bits of their float32 inputs: results differ from float32 at about 1e-3 relative.',
});

/** A training step: `loss.backward()` with the statements computing `loss` before it in the same block. */
interface TrainingStep {
  f: PyFile;
  backward: PyNode;
  loss: string;
  list: PyNode[];
  index: number;
  region: PyNode[];
  ind: string;
}

const AUTOCAST_WORDS = /(?:^|\.|_)autocast$/;

function inAutocast(f: PyFile, st: PyNode): boolean {
  return ancestors(f, st).some(
    (a) =>
      (a._t === 'With' || a._t === 'AsyncWith') &&
      (a.items as PyNode[]).some((it) => {
        const ce = it.context_expr as PyNode;
        const callee = ce._t === 'Call' ? ce.func : ce;
        return AUTOCAST_WORDS.test(qualify(f, callee) ?? dotted(callee) ?? '');
      }),
  );
}

function assignedNames(st: PyNode): string[] {
  const out: string[] = [];
  const collect = (t: unknown): void => {
    if (!isNode(t)) return;
    if (t._t === 'Name') out.push(t.id as string);
    else if (t._t === 'Tuple' || t._t === 'List') (t.elts as PyNode[]).forEach(collect);
    else if (t._t === 'Starred') collect(t.value);
  };
  if (st._t === 'Assign') (st.targets as PyNode[]).forEach(collect);
  else if (st._t === 'AnnAssign' || st._t === 'AugAssign') collect(st.target);
  return out;
}

function loadedNames(f: PyFile, st: PyNode): Set<string> {
  const out = new Set<string>();
  for (const n of f.nodes)
    if (n._t === 'Name' && n.s! >= st.s! && n.e! <= st.e! && (n.ctx as PyNode)?._t === 'Load') out.add(n.id as string);
  return out;
}

/** `x = x.to(device)`, `x, y = x.cuda(), y.cuda()`: data movement, left outside the autocast region. */
function isDeviceMove(st: PyNode): boolean {
  const v = st.value as PyNode | undefined;
  if (!v) return false;
  const parts = v._t === 'Tuple' ? (v.elts as PyNode[]) : [v];
  return parts.every(
    (p) =>
      p._t === 'Call' && isNode(p.func) && p.func._t === 'Attribute' && ['to', 'cuda', 'cpu', 'pin_memory'].includes(p.func.attr as string),
  );
}

function trainingSteps(f: PyFile): { steps: TrainingStep[]; problems: string[] } {
  const steps: TrainingStep[] = [];
  const problems: string[] = [];
  for (const st of f.nodes) {
    if (st._t !== 'Expr') continue;
    const call = st.value as PyNode;
    if (call._t !== 'Call' || !isNode(call.func) || call.func._t !== 'Attribute' || call.func.attr !== 'backward') continue;
    const recv = call.func.value as PyNode;
    if (recv._t !== 'Name') continue;
    const loss = recv.id as string;
    const slot = f.slots.get(st);
    if (!slot) continue;
    if (inAutocast(f, st)) continue;
    let li = -1;
    for (let j = slot.index - 1; j >= 0; j--) {
      if (assignedNames(slot.list[j]!).includes(loss)) {
        li = j;
        break;
      }
    }
    if (li < 0) {
      problems.push(`${f.path}:${st.l}: ${loss} is not computed in the same block as ${loss}.backward()`);
      continue;
    }
    const lossSt = slot.list[li]!;
    if (inAutocast(f, lossSt) || !['Assign', 'AnnAssign', 'AugAssign'].includes(lossSt._t)) continue;
    const region = [lossSt];
    const needed = loadedNames(f, lossSt);
    for (let j = li - 1; j >= 0; j--) {
      const prev = slot.list[j]!;
      if (prev._t !== 'Assign' || isDeviceMove(prev) || !assignedNames(prev).some((n) => needed.has(n))) break;
      region.unshift(prev);
      for (const n of loadedNames(f, prev)) needed.add(n);
    }
    const ind = indentOf(f, region[0]!);
    const sameIndent = region.every((r) => indentOf(f, r) === ind && endsItsLine(f, r));
    const multilineString = f.nodes.some((n) =>
      (n._t === 'Constant' && typeof n.value === 'string') || n._t === 'JoinedStr'
        ? n.s! >= region[0]!.s! && n.e! <= region.at(-1)!.e! && text(f, n).includes('\n')
        : false,
    );
    if (ind === null || !sameIndent || multilineString) {
      problems.push(`${f.path}:${region[0]!.l}: the forward/loss statements cannot be re-indented safely`);
      continue;
    }
    if (steps.some((s) => s.region[0] === region[0])) continue;
    steps.push({ f, backward: st, loss, list: slot.list, index: slot.index, region, ind });
  }
  return { steps, problems };
}

function wrapRegion(step: TrainingStep, header: string, rule: string): Splice {
  const { f, region, ind } = step;
  const start = lineStartOf(f.src, region[0]!.s!);
  const end = lineEndOf(f.src, region.at(-1)!.e!);
  const body = f.src.slice(start, end);
  const unit = indentUnit(ind);
  const indented = body
    .split('\n')
    .map((l) => (l.trim() === '' ? l : unit + l))
    .join('\n');
  return { s: start, e: end, text: `${ind}${header}\n${indented}${body.endsWith('\n') ? '' : '\n'}`, rule };
}

function autocastRule(dtype: 'bfloat16' | 'float16'): OptimizationRule {
  const name: OptimizationName = dtype === 'bfloat16' ? 'autocast-bf16' : 'autocast-fp16';
  const short = dtype === 'bfloat16' ? 'bf16' : 'fp16';
  return {
    name,
    title: `${short} autocast around the forward pass and loss${dtype === 'float16' ? ' (+ GradScaler)' : ''}`,
    benefit: `matmuls and convolutions run in ${dtype} (tensor cores / AMX / half the memory traffic).`,
    risk: 'high',
    criteria: dtype === 'bfloat16' ? BF16 : FP16,
    fits(ctx) {
      if (ctx.target === 'mps') return 'autocast on MPS needs PyTorch ≥ 2.5 and is not proposed for MPS workers';
      if (dtype === 'bfloat16') {
        const v = needsTorch(ctx, [1, 10], 'torch.autocast');
        if (v) return v;
        if (ctx.target === 'cpu') return null;
        if (ctx.target === 'cuda') return needsAmpere(ctx, 'bf16');
        const arch = ctx.runtime?.gpuArch ?? '';
        return AMD_BF16.test(arch)
          ? null
          : `bf16 matrix instructions need CDNA2+ (gfx90a, gfx94x); the worker's GPU is ${arch || 'unknown'}`;
      }
      if (ctx.target === 'cpu') return 'fp16 autocast on CPU is slow or missing (PyTorch < 2.4); bf16 is the CPU candidate';
      return needsTorch(ctx, [1, 10], 'torch.autocast');
    },
    plan(files, ctx) {
      const plan: Record<string, FilePlan> = {};
      const problems: string[] = [];
      const device = ctx.target === 'cpu' ? 'cpu' : 'cuda';
      for (const f of files) {
        const { steps, problems: p } = trainingSteps(f);
        problems.push(...p);
        if (steps.length === 0) continue;
        if (
          dtype === 'float16' &&
          f.nodes.some((n) => (n._t === 'Attribute' || n._t === 'Name') && /GradScaler$/.test(qualify(f, n) ?? dotted(n) ?? ''))
        ) {
          problems.push(`${f.path}: already uses a GradScaler`);
          continue;
        }
        const t = torchName(f);
        if (!t) {
          problems.push(`${f.path}: no name for the torch module`);
          continue;
        }
        const fp: FilePlan = { splices: [], hazards: [] };
        const used = new Set(f.nodes.filter((n) => n._t === 'Name').map((n) => n.id as string));
        const scaler = ['scaler', 'grad_scaler', '_chatgpu_scaler'].find((s) => !used.has(s))!;
        const optimizers = new Set<string>();
        for (const n of f.nodes) {
          if (n._t === 'Call' && isNode(n.func) && n.func._t === 'Attribute' && n.func.attr === 'zero_grad') {
            const r = dotted(n.func.value);
            if (r) optimizers.add(r);
          }
          if (
            n._t === 'Assign' &&
            (qualify(f, (n.value as PyNode).func) ?? '').startsWith('torch.optim.') &&
            !(qualify(f, (n.value as PyNode).func) ?? '').startsWith('torch.optim.lr_scheduler')
          ) {
            for (const a of assignedNames(n)) optimizers.add(a);
          }
        }
        for (const step of steps) {
          const header = `with ${t}.autocast(device_type="${device}", dtype=${t}.${dtype}):`;
          const splices: Splice[] = [wrapRegion(step, header, name)];
          if (dtype === 'float16') {
            // the optimizer step after backward, in the same block
            let stepIdx = -1;
            let opt = '';
            for (let j = step.index + 1; j < step.list.length; j++) {
              const s = step.list[j]!;
              const c = s._t === 'Expr' ? (s.value as PyNode) : null;
              if (
                c?._t === 'Call' &&
                isNode(c.func) &&
                c.func._t === 'Attribute' &&
                c.func.attr === 'step' &&
                (c.args as PyNode[]).length === 0 &&
                (c.keywords as PyNode[]).length === 0
              ) {
                const r = dotted(c.func.value);
                if (r && optimizers.has(r)) {
                  stepIdx = j;
                  opt = r;
                  break;
                }
              }
            }
            const stepSt = step.list[stepIdx];
            if (!stepSt || indentOf(f, stepSt) !== step.ind || !endsItsLine(f, stepSt)) {
              problems.push(
                `${f.path}:${step.backward.l}: no optimizer.step() after ${step.loss}.backward() in the same block (GradScaler needs it)`,
              );
              continue;
            }
            const recv = ((step.backward.value as PyNode).func as PyNode).value as PyNode;
            splices.push({ s: recv.s!, e: recv.e!, text: `${scaler}.scale(${step.loss})`, rule: name });
            for (let j = step.index + 1; j < stepIdx; j++) {
              const s = step.list[j]!;
              const c = s._t === 'Expr' ? (s.value as PyNode) : null;
              if (
                c?._t === 'Call' &&
                /clip_grad_(?:norm|value)_$/.test(qualify(f, c.func) ?? dotted(c.func) ?? '') &&
                indentOf(f, s) === step.ind
              ) {
                const at = lineStartOf(f.src, s.s!);
                splices.push({ s: at, e: at, text: `${step.ind}${scaler}.unscale_(${opt})\n`, rule: name });
              }
            }
            splices.push({ s: (stepSt.value as PyNode).s!, e: (stepSt.value as PyNode).e!, text: `${scaler}.step(${opt})`, rule: name });
            splices.push(lineAfter(f, stepSt, `${scaler}.update()`, name, step.ind));
            // one scaler for the whole run: before the outermost loop around the step in its function, else at module level
            let loop: PyNode | null = null;
            for (const a of ancestors(f, step.backward)) {
              if (a._t === 'FunctionDef' || a._t === 'AsyncFunctionDef' || a._t === 'ClassDef') break;
              if (a._t === 'For' || a._t === 'While' || a._t === 'AsyncFor') loop = a;
            }
            const v = parseVersion(ctx.runtime?.torch);
            const make = v && atLeast(v, [2, 3]) ? `${t}.amp.GradScaler("cuda")` : `${t}.cuda.amp.GradScaler()`;
            const loopInd = loop ? indentOf(f, loop) : null;
            if (loop && loopInd !== null) {
              const at = lineStartOf(f.src, loop.s!);
              splices.push({ s: at, e: at, text: `${loopInd}${scaler} = ${make}\n`, rule: name });
            } else {
              splices.push(setupSplice(f, () => `${scaler} = ${make}`, name));
            }
          }
          fp.splices.push(...splices);
          fp.hazards.push(
            hazard(
              f,
              step.region[0]!,
              'info',
              name,
              `forward pass and loss (lines ${step.region[0]!.l}–${step.region.at(-1)!.l}) run under ${short} autocast`,
              `Ops on the autocast list compute in ${dtype}; losses and reductions stay float32. ${dtype === 'float16' ? 'Gradients are scaled so small values do not underflow; steps with inf/NaN gradients are skipped.' : "bf16 keeps float32's range, so no loss scaling is needed."}`,
              "Compare outputs within the candidate's declared tolerance; drop it if the loss diverges.",
            ),
          );
        }
        if (fp.splices.length) plan[f.path] = fp;
      }
      const notes = [
        dtype === 'bfloat16'
          ? 'bf16 autocast computes matmuls/convolutions with 8 mantissa bits: outputs differ from float32 at about 1e-2 relative, and training trajectories drift further.'
          : 'fp16 autocast computes matmuls/convolutions with 10 mantissa bits and GradScaler skips steps whose gradients overflow: outputs differ from float32 at about 1e-3–1e-2 relative.',
      ];
      return planFrom(plan, notes, problems.length ? problems.join('; ') : 'no training step (loss.backward()) outside autocast');
    },
  };
}

/** DataLoader(...) calls the rule may edit: resolvable arguments, map-style data. */
const usesIterableDataset = (f: PyFile): boolean =>
  refs(f, /IterableDataset$/).length > 0 || [...f.aliases.values()].some((q) => q.endsWith('.IterableDataset'));

function loaders(f: PyFile, problems: string[], files: readonly PyFile[]): PyNode[] {
  const found = calls(f, (q) => DATALOADER.has(q ?? ''));
  if (found.length === 0) return [];
  const iterable = files.find(usesIterableDataset);
  if (iterable) {
    problems.push(
      `${iterable.path}: uses an IterableDataset (every worker would yield the whole stream unless it shards by get_worker_info())`,
    );
    return [];
  }
  return found.filter((c) => {
    if (hasStarStar(c)) problems.push(`${f.path}:${c.l}: DataLoader arguments come from **kwargs/*args; left alone`);
    return !hasStarStar(c);
  });
}

function argOf(call: PyNode, name: string, position: number): PyNode | undefined {
  return (keyword(call, name)?.value as PyNode | undefined) ?? (call.args as PyNode[])[position];
}

/** Appends `, name=value` after a call's last argument. */
function addKeyword(call: PyNode, kw: string, rule: string): Splice {
  const parts = [...(call.args as PyNode[]), ...(call.keywords as PyNode[]).map((k) => (k.e !== undefined ? k : (k.value as PyNode)))];
  const at = Math.max(...parts.map((p) => p.e!));
  return { s: at, e: at, text: `, ${kw}`, rule };
}

function workersFor(ctx: TransformContext): number {
  const base = ctx.target === 'cuda' || ctx.target === 'rocm' ? 4 : 2;
  return ctx.cpus ? Math.min(base, ctx.cpus - 1) : base;
}

const dataloaderWorkers: OptimizationRule = {
  name: 'dataloader-workers',
  title: 'DataLoader num_workers > 0',
  benefit: 'batches are loaded and collated in worker processes while the model trains.',
  risk: 'none',
  criteria: null,
  fits: (ctx) => (ctx.cpus !== undefined && ctx.cpus < 2 ? `the job has ${ctx.cpus} CPU core: no room for loader workers` : null),
  plan(files, ctx) {
    const problems: string[] = [];
    const plan: Record<string, FilePlan> = {};
    const n = workersFor(ctx);
    const guarded = files.some(hasMainGuard);
    for (const f of files) {
      const fp: FilePlan = { splices: [], hazards: [] };
      for (const c of loaders(f, problems, files)) {
        const nw = argOf(c, 'num_workers', 5);
        if (nw && !(nw._t === 'Constant' && nw.value === 0)) continue;
        if (ctx.target === 'mps' && !guarded) {
          problems.push(
            `${f.path}:${c.l}: macOS starts loader workers with spawn, which re-runs a script without an \`if __name__ == "__main__":\` guard`,
          );
          continue;
        }
        fp.splices.push(
          nw
            ? { s: nw.s!, e: nw.e!, text: String(n), rule: 'dataloader-workers' }
            : addKeyword(c, `num_workers=${n}`, 'dataloader-workers'),
        );
        if (ctx.target === 'mps') {
          fp.hazards.push(
            hazard(
              f,
              c,
              'warning',
              'dataloader-workers',
              'loader workers are spawned on macOS',
              'Spawned workers pickle the dataset, collate_fn and worker_init_fn: lambdas and local functions fail.',
              'Use module-level functions in the dataset and loader arguments.',
            ),
          );
        }
      }
      if (fp.splices.length) plan[f.path] = fp;
    }
    return planFrom(plan, [], problems.length ? problems.join('; ') : 'no DataLoader without worker processes');
  },
};

const pinMemory: OptimizationRule = {
  name: 'pin-memory',
  title: 'DataLoader pin_memory=True',
  benefit: 'batches land in page-locked memory, so host-to-GPU copies are faster (and can overlap with non_blocking=True).',
  risk: 'none',
  criteria: null,
  fits: (ctx) => (ctx.target === 'cuda' ? null : `pinned memory speeds up CUDA transfers only (target ${ctx.target})`),
  plan(files) {
    const problems: string[] = [];
    const plan: Record<string, FilePlan> = {};
    for (const f of files) {
      const fp: FilePlan = { splices: [], hazards: [] };
      const value = f.src.includes('_CHATGPU_DEVICE_TYPE') ? '_CHATGPU_DEVICE_TYPE == "cuda"' : 'True';
      for (const c of loaders(f, problems, files)) {
        const pm = argOf(c, 'pin_memory', 7);
        if (pm && !isFalse(pm)) continue;
        fp.splices.push(pm ? { s: pm.s!, e: pm.e!, text: value, rule: 'pin-memory' } : addKeyword(c, `pin_memory=${value}`, 'pin-memory'));
      }
      if (fp.splices.length) plan[f.path] = fp;
    }
    return planFrom(plan, [], problems.length ? problems.join('; ') : 'no DataLoader without pin_memory');
  },
};

const persistentWorkers: OptimizationRule = {
  name: 'persistent-workers',
  title: 'DataLoader persistent_workers=True',
  benefit: 'loader workers survive between epochs instead of being started again for every epoch.',
  risk: 'none',
  criteria: null,
  fits: (ctx) => needsTorch(ctx, [1, 7], 'persistent_workers'),
  plan(files) {
    const problems: string[] = [];
    const plan: Record<string, FilePlan> = {};
    for (const f of files) {
      const fp: FilePlan = { splices: [], hazards: [] };
      for (const c of loaders(f, problems, files)) {
        const nw = argOf(c, 'num_workers', 5);
        if (!nw || keyword(c, 'persistent_workers')) continue;
        // A persistent loader creates its iterator once, so later epochs skip the per-iterator seed draw from
        // the sampler's generator: a shuffled loader then visits other permutations (measured on 1.13).
        const shuffle = argOf(c, 'shuffle', 2);
        if ((shuffle && !isFalse(shuffle)) || argOf(c, 'sampler', 3) || argOf(c, 'batch_sampler', 4)) {
          problems.push(`${f.path}:${c.l}: shuffled/sampled loader: persistent workers would change the shuffle order of later epochs`);
          continue;
        }
        let value: string;
        if (nw._t === 'Constant' && typeof nw.value === 'number') {
          if (nw.value <= 0) continue;
          value = 'True';
        } else if (dotted(nw))
          value = `${text(f, nw)} > 0`; // persistent_workers=True with 0 workers raises
        else continue;
        fp.splices.push(addKeyword(c, `persistent_workers=${value}`, 'persistent-workers'));
      }
      if (fp.splices.length) plan[f.path] = fp;
    }
    return planFrom(
      plan,
      [],
      problems.length ? problems.join('; ') : 'no unshuffled DataLoader with num_workers > 0 that restarts its workers every epoch',
    );
  },
};

const torchCompile: OptimizationRule = {
  name: 'torch-compile',
  title: 'torch.compile the model',
  benefit: 'TorchInductor fuses elementwise ops and generates kernels for the model (after a compile on the first steps).',
  risk: 'low',
  criteria: LOW,
  fits(ctx) {
    const v = needsTorch(ctx, [2, 0], 'torch.compile');
    if (v) return v;
    if (ctx.target === 'mps') {
      const m = needsTorch(ctx, [2, 6], 'torch.compile on MPS');
      if (m) return m;
    }
    const py = parseVersion(ctx.runtime?.python);
    const torch = parseVersion(ctx.runtime?.torch)!;
    const minTorch: Record<string, [number, number]> = { '3.11': [2, 1], '3.12': [2, 4], '3.13': [2, 6] };
    const need = py ? minTorch[py.join('.')] : undefined;
    if (need && !atLeast(torch, need))
      return `torch.compile supports Python ${py!.join('.')} from PyTorch ${need.join('.')} (the worker has ${ctx.runtime!.torch})`;
    return null;
  },
  plan(files, ctx) {
    const classes = moduleClasses(files);
    const plan: Record<string, FilePlan> = {};
    const problems: string[] = [];
    const v = parseVersion(ctx.runtime?.torch)!;
    for (const f of files) {
      const models = modelAssignments(f, classes);
      if (models.length === 0) continue;
      const compiled = f.nodes.some(
        (n) =>
          n._t === 'Call' &&
          (qualify(f, n.func) === 'torch.compile' ||
            /(?:^|\.)_chatgpu_compile$/.test(dotted(n.func) ?? '') ||
            (isNode(n.func) &&
              n.func._t === 'Attribute' &&
              n.func.attr === 'compile' &&
              models.some((m) => dotted((n.func as PyNode).value) === m.name))),
      );
      if (compiled) {
        problems.push(`${f.path}: already compiles the model`);
        continue;
      }
      const t = torchName(f);
      const fp: FilePlan = { splices: [], hazards: [] };
      for (const m of models) {
        // Module.compile (2.2+) compiles in place and keeps state_dict keys; torch.compile(model) would prefix them with _orig_mod.
        if (atLeast(v, [2, 2])) fp.splices.push(lineAfter(f, m.st, `${m.name}.compile()`, 'torch-compile', m.ind));
        else if (t) fp.splices.push(lineAfter(f, m.st, `${m.name}.forward = ${t}.compile(${m.name}.forward)`, 'torch-compile', m.ind));
        else continue;
        fp.hazards.push(
          hazard(
            f,
            m.st,
            'info',
            'torch-compile',
            `${m.name} is compiled on its first calls`,
            'Compilation takes seconds to minutes and recompiles when input shapes change; short runs can get slower.',
            'Time with warm-up iterations discarded; pass dynamic=True if shapes vary.',
          ),
        );
        if (ctx.target === 'cpu')
          fp.hazards.push(
            hazard(
              f,
              m.st,
              'info',
              'torch-compile',
              'Inductor on CPU compiles C++',
              'The worker needs a C++ compiler (gcc/clang) for the generated kernels.',
              'Install build-essential on CPU workers, or drop the candidate.',
            ),
          );
      }
      if (fp.splices.length) plan[f.path] = fp;
    }
    return planFrom(
      plan,
      ['torch.compile fuses and reorders floating-point operations: results differ in the last bits.'],
      problems.length ? problems.join('; ') : 'no nn.Module model assignment (model = Net(...) trained via model.parameters())',
    );
  },
};

const channelsLast: OptimizationRule = {
  name: 'channels-last',
  title: 'channels-last memory format for the convnet',
  benefit: 'NHWC convolutions use tensor cores without layout transposes (cuDNN/MIOpen).',
  risk: 'low',
  criteria: LOW,
  fits: (ctx) =>
    ctx.target === 'cuda' || ctx.target === 'rocm' ? null : `channels-last pays off on GPU tensor cores (target ${ctx.target})`,
  plan(files) {
    if (!files.some((f) => refs(f, CONV_2D).length > 0)) return { skip: 'no Conv2d: not a 2-D convnet' };
    const classes = moduleClasses(files);
    const plan: Record<string, FilePlan> = {};
    const problems: string[] = [];
    for (const f of files) {
      const models = modelAssignments(f, classes).filter((m) => classes.conv2d.has(m.cls) || m.cls.startsWith('torchvision.models.'));
      if (models.length === 0) continue;
      if (f.nodes.some((n) => n._t === 'Attribute' && n.attr === 'channels_last')) {
        problems.push(`${f.path}: already uses channels_last`);
        continue;
      }
      const t = torchName(f);
      if (!t) continue;
      const fp: FilePlan = { splices: [], hazards: [] };
      for (const m of models) {
        if (classes.views.has(m.cls)) {
          problems.push(
            `${f.path}:${m.st.l}: ${m.cls} calls .view(), which fails on channels-last activations (use .reshape/.flatten first)`,
          );
          continue;
        }
        fp.splices.push(lineAfter(f, m.st, `${m.name} = ${m.name}.to(memory_format=${t}.channels_last)`, 'channels-last', m.ind));
      }
      if (fp.splices.length) plan[f.path] = fp;
    }
    return planFrom(
      plan,
      ['Channels-last convolutions use other kernels: results differ in the last bits.'],
      problems.length ? problems.join('; ') : 'no model built from a Conv2d module class of this code',
    );
  },
};

export const OPTIMIZATION_RULES: readonly OptimizationRule[] = [
  cudnnBenchmark,
  matmulPrecision,
  autocastRule('bfloat16'),
  autocastRule('float16'),
  dataloaderWorkers,
  pinMemory,
  persistentWorkers,
  torchCompile,
  channelsLast,
];
