/**
 * The sandbox's seccomp filter (sandbox.ts passes it to `bwrap --seccomp FD`): a classic-BPF program
 * the kernel runs on every system call of the task, which refuses the calls an unprivileged task never
 * needs and that widen the kernel's attack surface. Modelled on the default profiles of container
 * runtimes (Docker/Podman's, and closest, Flatpak's, which is also handed to bwrap this way): a deny
 * list (everything else is allowed), not an allow list, so any Python/CUDA/ROCm workload keeps working.
 *
 * Why a generator here rather than libseccomp: libseccomp would have to be on every contributor's
 * machine (Debian's `seccomp` or `python3-seccomp`; Node has no maintained binding), and setup is one
 * command (`npm install`, plus bubblewrap). The program is short and its format fixed (linux/filter.h,
 * linux/seccomp.h): `struct sock_filter` is 8 bytes (u16 code, u8 jt, u8 jf, u32 k, little-endian),
 * `struct seccomp_data` holds nr at 0, arch at 4, the instruction pointer at 8 and args[i] at 16 + 8i
 * (low word first on these little-endian machines). Only x86_64 and aarch64 are supported; on any other
 * architecture the worker runs bwrap without a filter and says so (resolveSandbox).
 *
 * The program:
 * 1. arch ≠ this machine's native ABI (x86_64: AUDIT_ARCH_X86_64; aarch64: AUDIT_ARCH_AARCH64) →
 *    kill the process (SIGSYS). This refuses the i386 ABI (`int 0x80`, which even a 64-bit process can
 *    execute) and AArch32, whose syscall numbers differ: a number filter for one ABI means nothing for
 *    another. On x86_64 a number with the x32 bit (0x40000000) is killed too (nr −1 is let through, as
 *    libseccomp does: the kernel answers ENOSYS). Killing rather than failing the call: a 32-bit program
 *    would otherwise fail in confusing ways; SIGSYS ("Bad system call") says what happened.
 * 2. Each denied call (SANDBOX_RULES) → the errno of its rule; `when` narrows a rule to some arguments,
 *    always compared on the argument's low 32 bits, which is all the kernel reads of them (clone's
 *    flags, ioctl's request and personality's persona are 32-bit in the kernel).
 * 3. Everything else → allowed.
 *
 * Syscall numbers: arch/x86/entry/syscalls/syscall_64.tbl and include/uapi/asm-generic/unistd.h
 * (aarch64), each checked against /usr/include/x86_64-linux-gnu/asm/unistd_64.h and
 * /usr/include/asm-generic/unistd.h of Debian 12's linux-libc-dev (6.1).
 */

export type SeccompArch = 'x86_64' | 'aarch64';

/** `struct sock_filter` (linux/filter.h). */
export interface SockFilter {
  code: number;
  jt: number;
  jf: number;
  k: number;
}

/** AUDIT_ARCH_* (linux/audit.h): EM_* | 64BIT | LE. */
export const AUDIT_ARCH: Record<SeccompArch, number> = { x86_64: 0xc000003e, aarch64: 0xc00000b7 };
export const SECCOMP_RET_KILL_PROCESS = 0x80000000;
export const SECCOMP_RET_ERRNO = 0x00050000;
export const SECCOMP_RET_ALLOW = 0x7fff0000;
/** x86_64's x32 ABI marks its syscall numbers with this bit. */
export const X32_SYSCALL_BIT = 0x40000000;
export const EPERM = 1;
export const ENOSYS = 38;

// Classic BPF opcodes (linux/bpf_common.h): class | size | mode, class | op | source.
const LD_W_ABS = 0x00 | 0x00 | 0x20;
const JMP_JEQ_K = 0x05 | 0x10 | 0x00;
const JMP_JGE_K = 0x05 | 0x30 | 0x00;
const JMP_JSET_K = 0x05 | 0x40 | 0x00;
const RET_K = 0x06;
// struct seccomp_data
const OFF_NR = 0;
const OFF_ARCH = 4;
const argLow = (i: number) => 16 + 8 * i;

/** Namespace flags of clone(2) (linux/sched.h). CLONE_NEWTIME (0x80) is left out: in clone's
 *  flags that bit belongs to the exit signal (CSIGNAL); only unshare and clone3 take it. */
export const CLONE_NAMESPACE_FLAGS =
  0x00020000 /* NEWNS */ |
  0x02000000 /* NEWCGROUP */ |
  0x04000000 /* NEWUTS */ |
  0x08000000 /* NEWIPC */ |
  0x10000000 /* NEWUSER */ |
  0x20000000 /* NEWPID */ |
  0x40000000; /* NEWNET */
/** asm-generic/ioctls.h, the same on both architectures. */
export const TIOCSTI = 0x5412;
export const TIOCLINUX = 0x541c;
/** personality(2) values a task may set (Docker's list): PER_LINUX, PER_LINUX32, UNAME26,
 *  UNAME26|PER_LINUX32, and 0xffffffff, which only queries. Refused: READ_IMPLIES_EXEC,
 *  ADDR_NO_RANDOMIZE and the other emulations, which weaken the task's own exploit mitigations. */
export const ALLOWED_PERSONALITIES = [0x0, 0x8, 0x20000, 0x20008, 0xffffffff];

/**
 * System call numbers for the calls the rules name. A call missing on an architecture (x86's iopl,
 * ioperm and uselib on aarch64) is simply not in that architecture's program.
 */
export const SYSCALL_NUMBERS: Record<string, Partial<Record<SeccompArch, number>>> = {
  // namespaces
  unshare: { x86_64: 272, aarch64: 97 },
  setns: { x86_64: 308, aarch64: 268 },
  clone: { x86_64: 56, aarch64: 220 },
  clone3: { x86_64: 435, aarch64: 435 },
  // mounts
  mount: { x86_64: 165, aarch64: 40 },
  umount2: { x86_64: 166, aarch64: 39 },
  pivot_root: { x86_64: 155, aarch64: 41 },
  chroot: { x86_64: 161, aarch64: 51 },
  open_tree: { x86_64: 428, aarch64: 428 },
  move_mount: { x86_64: 429, aarch64: 429 },
  fsopen: { x86_64: 430, aarch64: 430 },
  fsconfig: { x86_64: 431, aarch64: 431 },
  fsmount: { x86_64: 432, aarch64: 432 },
  fspick: { x86_64: 433, aarch64: 433 },
  mount_setattr: { x86_64: 442, aarch64: 442 },
  // kernel interfaces with a long CVE history, or none a task needs
  bpf: { x86_64: 321, aarch64: 280 },
  userfaultfd: { x86_64: 323, aarch64: 282 },
  perf_event_open: { x86_64: 298, aarch64: 241 },
  io_uring_setup: { x86_64: 425, aarch64: 425 },
  io_uring_enter: { x86_64: 426, aarch64: 426 },
  io_uring_register: { x86_64: 427, aarch64: 427 },
  add_key: { x86_64: 248, aarch64: 217 },
  request_key: { x86_64: 249, aarch64: 218 },
  keyctl: { x86_64: 250, aarch64: 219 },
  // the machine's administration
  kexec_load: { x86_64: 246, aarch64: 104 },
  kexec_file_load: { x86_64: 320, aarch64: 294 },
  init_module: { x86_64: 175, aarch64: 105 },
  finit_module: { x86_64: 313, aarch64: 273 },
  delete_module: { x86_64: 176, aarch64: 106 },
  swapon: { x86_64: 167, aarch64: 224 },
  swapoff: { x86_64: 168, aarch64: 225 },
  reboot: { x86_64: 169, aarch64: 142 },
  acct: { x86_64: 163, aarch64: 89 },
  quotactl: { x86_64: 179, aarch64: 60 },
  quotactl_fd: { x86_64: 443, aarch64: 443 },
  syslog: { x86_64: 103, aarch64: 116 },
  iopl: { x86_64: 172 },
  ioperm: { x86_64: 173 },
  uselib: { x86_64: 134 },
  // the clock
  settimeofday: { x86_64: 164, aarch64: 170 },
  clock_settime: { x86_64: 227, aarch64: 112 },
  clock_adjtime: { x86_64: 305, aarch64: 266 },
  adjtimex: { x86_64: 159, aarch64: 171 },
  // other processes
  ptrace: { x86_64: 101, aarch64: 117 },
  process_vm_writev: { x86_64: 311, aarch64: 271 },
  pidfd_getfd: { x86_64: 438, aarch64: 438 },
  // files by handle (open_by_handle_at walks past any mount: "shocker")
  open_by_handle_at: { x86_64: 304, aarch64: 265 },
  name_to_handle_at: { x86_64: 303, aarch64: 264 },
  // argument checks
  personality: { x86_64: 135, aarch64: 92 },
  ioctl: { x86_64: 16, aarch64: 29 },
};

/** Narrows a rule to calls whose argument `arg` (low 32 bits) has any of `anyBits` set, is one of
 *  `oneOf`, or is none of `noneOf`. */
export type ArgCheck = { arg: number; anyBits: number } | { arg: number; oneOf: number[] } | { arg: number; noneOf: number[] };

export interface SeccompRule {
  syscall: string;
  errno: number;
  when?: ArgCheck;
}

const deny = (errno: number, ...names: string[]): SeccompRule[] => names.map((syscall) => ({ syscall, errno }));

/**
 * What the task sandbox refuses. EPERM, as a kernel refuses an unprivileged caller; ENOSYS where
 * user space falls back to an older call when it gets "not implemented": glibc's thread and process
 * creation retry clone3 as clone (seccomp cannot read clone3's flags, which sit in a struct in
 * memory, so clone3 is refused whole and clone checked instead: Docker's and Flatpak's choice), and
 * libmount goes from the new mount API back to mount(2) (then refused with EPERM), as in Flatpak.
 *
 * ptrace is refused although a debugger would only reach the task's own processes: one of them,
 * bwrap's PID 1 (the sandbox's init), runs without this filter — bwrap loads it only into the process
 * it execs — and for an ordinary-user worker it has the task's uid, so tracing it (or writing its
 * memory: process_vm_writev, /proc/1/mem, which sandbox.ts hides) would run any call unfiltered.
 * process_vm_readv stays allowed: reading gives nothing the filter guards, and py-spy (in its
 * `--nonblocking` mode) samples Python stacks with it.
 */
export const SANDBOX_RULES: readonly SeccompRule[] = [
  ...deny(EPERM, 'unshare', 'setns'),
  { syscall: 'clone', errno: EPERM, when: { arg: 0, anyBits: CLONE_NAMESPACE_FLAGS } },
  ...deny(ENOSYS, 'clone3'),
  ...deny(EPERM, 'mount', 'umount2', 'pivot_root', 'chroot'),
  ...deny(ENOSYS, 'open_tree', 'move_mount', 'fsopen', 'fsconfig', 'fsmount', 'fspick', 'mount_setattr'),
  ...deny(
    EPERM,
    'bpf',
    'userfaultfd',
    'perf_event_open',
    'io_uring_setup',
    'io_uring_enter',
    'io_uring_register',
    'add_key',
    'request_key',
    'keyctl',
  ),
  ...deny(
    EPERM,
    'kexec_load',
    'kexec_file_load',
    'init_module',
    'finit_module',
    'delete_module',
    'swapon',
    'swapoff',
    'reboot',
    'acct',
    'quotactl',
    'quotactl_fd',
    'syslog',
    'iopl',
    'ioperm',
    'uselib',
  ),
  ...deny(EPERM, 'settimeofday', 'clock_settime', 'clock_adjtime', 'adjtimex'),
  ...deny(EPERM, 'ptrace', 'process_vm_writev', 'pidfd_getfd'),
  ...deny(EPERM, 'open_by_handle_at', 'name_to_handle_at'),
  { syscall: 'personality', errno: EPERM, when: { arg: 0, noneOf: ALLOWED_PERSONALITIES } },
  // Faking keyboard input into a terminal (CVE-2017-5226, bwrap's own advisory).
  { syscall: 'ioctl', errno: EPERM, when: { arg: 1, oneOf: [TIOCSTI, TIOCLINUX] } },
];

// ---------------------------------------------------------------------------------------------
// A tiny assembler: forward jumps to labels, resolved to the 8-bit offsets classic BPF allows.

type Target = string | null; // a label, or null: the next instruction
type Line =
  | { label: string }
  | { op: 'ld'; offset: number }
  | { op: 'jeq' | 'jge' | 'jset'; k: number; jt: Target; jf: Target }
  | { op: 'ret'; k: number };

function assemble(lines: Line[]): SockFilter[] {
  const at = new Map<string, number>();
  let n = 0;
  for (const l of lines) {
    if ('label' in l) {
      if (at.has(l.label)) throw new Error(`seccomp: label ${l.label} defined twice`);
      at.set(l.label, n);
    } else n++;
  }
  const out: SockFilter[] = [];
  const offset = (from: number, t: Target): number => {
    if (t === null) return 0;
    const to = at.get(t);
    if (to === undefined) throw new Error(`seccomp: jump to unknown label ${t}`);
    const d = to - (from + 1);
    // Classic BPF only jumps forward, by at most 255 instructions (u8 jt/jf).
    if (d < 0 || d > 255) throw new Error(`seccomp: jump from ${from} to ${t} (${to}) is out of range (${d}); split the program`);
    return d;
  };
  for (const l of lines) {
    if ('label' in l) continue;
    const i = out.length;
    if (l.op === 'ld') out.push({ code: LD_W_ABS, jt: 0, jf: 0, k: l.offset });
    else if (l.op === 'ret') out.push({ code: RET_K, jt: 0, jf: 0, k: l.k >>> 0 });
    else
      out.push({
        code: l.op === 'jeq' ? JMP_JEQ_K : l.op === 'jge' ? JMP_JGE_K : JMP_JSET_K,
        jt: offset(i, l.jt),
        jf: offset(i, l.jf),
        k: l.k >>> 0,
      });
  }
  if (out.length > 4096) throw new Error(`seccomp: ${out.length} instructions, over the kernel's 4096`); // BPF_MAXINSNS
  return out;
}

/** The program for `arch` from `rules` (see the file comment for its shape). */
export function compileSeccomp(arch: SeccompArch, rules: readonly SeccompRule[]): SockFilter[] {
  const lines: Line[] = [
    { op: 'ld', offset: OFF_ARCH },
    { op: 'jeq', k: AUDIT_ARCH[arch], jt: 'nr', jf: null },
    { op: 'ret', k: SECCOMP_RET_KILL_PROCESS },
    { label: 'nr' },
    { op: 'ld', offset: OFF_NR },
  ];
  if (arch === 'x86_64') {
    lines.push(
      { op: 'jge', k: X32_SYSCALL_BIT, jt: null, jf: 'rules' },
      { op: 'jeq', k: 0xffffffff, jt: 'allow', jf: null },
      { op: 'ret', k: SECCOMP_RET_KILL_PROCESS },
      { label: 'rules' },
    );
  }
  const seen = new Set<number>();
  const errnos = new Set<number>();
  const blocks: Line[] = [];
  for (const [i, r] of rules.entries()) {
    const nrs = SYSCALL_NUMBERS[r.syscall];
    if (!nrs) throw new Error(`seccomp: no syscall number known for ${r.syscall}`);
    if (!Number.isInteger(r.errno) || r.errno < 1 || r.errno > 4095)
      throw new Error(`seccomp: errno ${r.errno} for ${r.syscall} is not 1..4095`);
    const nr = nrs[arch];
    if (nr === undefined) continue; // not on this architecture
    if (seen.has(nr)) throw new Error(`seccomp: two rules for ${r.syscall} (${nr})`);
    seen.add(nr);
    const refuse = { op: 'ret' as const, k: SECCOMP_RET_ERRNO | r.errno };
    if (!r.when) {
      errnos.add(r.errno);
      lines.push({ op: 'jeq', k: nr, jt: `errno:${r.errno}`, jf: null });
      continue;
    }
    const b = `args:${i}`;
    const w = r.when;
    if (!Number.isInteger(w.arg) || w.arg < 0 || w.arg > 5) throw new Error(`seccomp: argument ${w.arg} of ${r.syscall} is not 0..5`);
    lines.push({ op: 'jeq', k: nr, jt: b, jf: null });
    blocks.push({ label: b }, { op: 'ld', offset: argLow(w.arg) });
    if ('anyBits' in w) {
      blocks.push(
        { op: 'jset', k: w.anyBits, jt: null, jf: `${b}:allow` },
        refuse,
        { label: `${b}:allow` },
        { op: 'ret', k: SECCOMP_RET_ALLOW },
      );
    } else if ('oneOf' in w) {
      for (const v of w.oneOf) blocks.push({ op: 'jeq', k: v, jt: `${b}:deny`, jf: null });
      blocks.push({ op: 'ret', k: SECCOMP_RET_ALLOW }, { label: `${b}:deny` }, refuse);
    } else {
      for (const v of w.noneOf) blocks.push({ op: 'jeq', k: v, jt: `${b}:allow`, jf: null });
      blocks.push(refuse, { label: `${b}:allow` }, { op: 'ret', k: SECCOMP_RET_ALLOW });
    }
  }
  lines.push({ label: 'allow' }, { op: 'ret', k: SECCOMP_RET_ALLOW });
  for (const e of [...errnos].sort((a, b) => a - b)) lines.push({ label: `errno:${e}` }, { op: 'ret', k: SECCOMP_RET_ERRNO | e });
  return assemble([...lines, ...blocks]);
}

/** The bytes `bwrap --seccomp` reads: struct sock_filter[], little-endian. */
export function encodeSeccomp(program: SockFilter[]): Buffer {
  const b = Buffer.alloc(program.length * 8);
  program.forEach((f, i) => {
    b.writeUInt16LE(f.code, i * 8);
    b.writeUInt8(f.jt, i * 8 + 2);
    b.writeUInt8(f.jf, i * 8 + 3);
    b.writeUInt32LE(f.k >>> 0, i * 8 + 4);
  });
  return b;
}

export interface SeccompFilter {
  arch: SeccompArch;
  program: Buffer;
  /** the calls refused on this architecture (some only for some arguments) */
  denied: string[];
  /** "seccomp: 54 system calls refused (x86_64)" */
  description: string;
}

export function seccompFilter(arch: SeccompArch, rules: readonly SeccompRule[] = SANDBOX_RULES): SeccompFilter {
  const program = encodeSeccomp(compileSeccomp(arch, rules));
  const denied = rules.filter((r) => SYSCALL_NUMBERS[r.syscall]?.[arch] !== undefined).map((r) => r.syscall);
  return { arch, program, denied, description: `seccomp: ${denied.length} system calls refused (${arch})` };
}

/** Node's name for the CPU → the filter's architecture; null where no filter is built. */
export function seccompArchOf(nodeArch: string): SeccompArch | null {
  return nodeArch === 'x64' ? 'x86_64' : nodeArch === 'arm64' ? 'aarch64' : null;
}

let hostFilter: SeccompFilter | null | undefined;

/** This machine's filter (built once); null on an architecture without one. */
export function hostSeccompFilter(): SeccompFilter | null {
  if (hostFilter === undefined) {
    const arch = seccompArchOf(process.arch);
    hostFilter = arch ? seccompFilter(arch) : null;
  }
  return hostFilter;
}
