/**
 * The transformation interface of the preparation toolkit (docs/architecture.md §4, "Prepare").
 *
 * A transformation takes a code tree and the context it must fit, and returns a candidate tree
 * plus everything an agent or a person needs to judge it: the edits, the hazards, what was left
 * unconverted and whether numerics can change. Transformations are pure and deterministic: the
 * same input gives byte-identical output, and code that already fits comes back unchanged.
 */

/** Where the code is to run. `rocm` is AMD via HIP (the command also accepts `hip`). */
export type Target = 'cpu' | 'cuda' | 'rocm' | 'mps';
export const TARGETS: readonly Target[] = ['cpu', 'cuda', 'rocm', 'mps'];

/** A code tree: POSIX relative path → file content (UTF-8 text). */
export type CodeTree = Readonly<Record<string, string>>;

/** Versions of what the worker runs, as far as they are known ("1.13", "2.4.1", "5.2"). */
export interface RuntimeVersions {
  torch?: string;
  python?: string;
  hip?: string;
  cuda?: string;
  /**
   * The worker's GPU: NVIDIA as "sm_86" (or a compute capability "8.6"), AMD as "gfx90a". Used by
   * the optimization candidates (TF32 and bf16 need Ampere+, bf16 on AMD needs CDNA2+).
   */
  gpuArch?: string;
  /** NVIDIA compute capability ("8.0", "7.5") when known separately from gpuArch. */
  computeCapability?: string;
}

export interface TransformContext {
  target: Target;
  runtime?: RuntimeVersions;
  /** AMD GPU architecture written into build files (default gfx1030). */
  hipArch?: string;
  /** CPU cores the job gets on the worker, when known (sizes DataLoader workers). */
  cpus?: number;
}

/** One edit, in the coordinates of the input file (1-based line). */
export interface Edit {
  file: string;
  line: number;
  before: string;
  after: string;
  rule: string;
}

export type HazardSeverity = 'error' | 'warning' | 'info';

/**
 * Something that may break or change the program on the target even though it translates:
 * what it is, why it matters and what would fix it. `line` is in the input file.
 */
export interface Hazard {
  file: string;
  line: number;
  severity: HazardSeverity;
  rule: string;
  what: string;
  why: string;
  fix: string;
}

/** An identifier or construct the transformation recognised as platform-specific but left as it was. */
export interface Unconverted {
  file: string;
  line: number;
  identifier: string;
  reason: string;
}

export interface TransformResult {
  /** False when the output tree is byte-identical to the input ("no change"). */
  changed: boolean;
  tree: CodeTree;
  edits: Edit[];
  hazards: Hazard[];
  unconverted: Unconverted[];
  /** True when an applied edit can alter results (precision, RNG streams, reduction order). */
  numericsMayChange: boolean;
  /** Why numerics may change, one line per reason. */
  numericsNotes: string[];
}

/** Per-file result used while assembling a TransformResult. */
export interface FileTransform {
  content: string;
  edits: Edit[];
  hazards: Hazard[];
  unconverted: Unconverted[];
  numericsNotes: string[];
}

export function emptyFileTransform(content: string): FileTransform {
  return { content, edits: [], hazards: [], unconverted: [], numericsNotes: [] };
}

/** Sort key used everywhere so reports come out in one deterministic order. */
export function byFileLine<T extends { file: string; line: number }>(a: T, b: T): number {
  return a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line;
}
