/**
 * The seccomp generator (seccomp.ts): its bytes for a small program, assembled by hand here; what the
 * whole sandbox program decides for each architecture, run through a classic-BPF interpreter written
 * for this test; the errors of a program it cannot build; and the kernel's own check of the program
 * for the architecture this machine is not (loaded through bwrap, where it kills the first exec).
 * The same filter attacked from inside a real task: sandbox.hostile.test.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildSandboxedCommand, execSandboxed } from './sandbox.js';
import {
  ALLOWED_PERSONALITIES,
  AUDIT_ARCH,
  CLONE_NAMESPACE_FLAGS,
  compileSeccomp,
  encodeSeccomp,
  ENOSYS,
  EPERM,
  hostSeccompFilter,
  SANDBOX_RULES,
  SECCOMP_RET_ALLOW,
  SECCOMP_RET_ERRNO,
  SECCOMP_RET_KILL_PROCESS,
  seccompArchOf,
  seccompFilter,
  SYSCALL_NUMBERS,
  TIOCLINUX,
  TIOCSTI,
  type SeccompArch,
} from './seccomp.js';

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');

describe('seccomp generator: bytes', () => {
  it('aarch64, one refused call: arch check, number, allow, errno', () => {
    const bytes = encodeSeccomp(compileSeccomp('aarch64', [{ syscall: 'bpf', errno: EPERM }]));
    // prettier-ignore
    expect(bytes).toEqual(Buffer.concat([
      hex('20 00 00 00 04 00 00 00'), // 0 ld  [4]                  arch
      hex('15 00 01 00 b7 00 00 c0'), // 1 jeq #AUDIT_ARCH_AARCH64 → 3
      hex('06 00 00 00 00 00 00 80'), // 2 ret KILL_PROCESS
      hex('20 00 00 00 00 00 00 00'), // 3 ld  [0]                  nr
      hex('15 00 01 00 18 01 00 00'), // 4 jeq #280 (bpf)           → 6
      hex('06 00 00 00 00 00 ff 7f'), // 5 ret ALLOW
      hex('06 00 00 00 01 00 05 00'), // 6 ret ERRNO|EPERM
    ]));
  });

  it('x86_64 with an argument check: x32 bit killed (nr -1 let through), clone refused only with namespace flags', () => {
    const program = compileSeccomp('x86_64', [
      { syscall: 'bpf', errno: EPERM },
      { syscall: 'clone', errno: EPERM, when: { arg: 0, anyBits: CLONE_NAMESPACE_FLAGS } },
    ]);
    // prettier-ignore
    expect(encodeSeccomp(program)).toEqual(Buffer.concat([
      hex('20 00 00 00 04 00 00 00'), //  0 ld  [4]
      hex('15 00 01 00 3e 00 00 c0'), //  1 jeq #AUDIT_ARCH_X86_64 → 3
      hex('06 00 00 00 00 00 00 80'), //  2 ret KILL_PROCESS
      hex('20 00 00 00 00 00 00 00'), //  3 ld  [0]
      hex('35 00 00 02 00 00 00 40'), //  4 jge #0x40000000 → 5, else → 7
      hex('15 00 03 00 ff ff ff ff'), //  5 jeq #-1 → 9 (allow)
      hex('06 00 00 00 00 00 00 80'), //  6 ret KILL_PROCESS
      hex('15 00 02 00 41 01 00 00'), //  7 jeq #321 (bpf) → 10
      hex('15 00 02 00 38 00 00 00'), //  8 jeq #56 (clone) → 11
      hex('06 00 00 00 00 00 ff 7f'), //  9 ret ALLOW
      hex('06 00 00 00 01 00 05 00'), // 10 ret ERRNO|EPERM
      hex('20 00 00 00 10 00 00 00'), // 11 ld  [16]  args[0], low word
      hex('45 00 00 01 00 00 02 7e'), // 12 jset #0x7e020000 → 13, else → 14
      hex('06 00 00 00 01 00 05 00'), // 13 ret ERRNO|EPERM
      hex('06 00 00 00 00 00 ff 7f'), // 14 ret ALLOW
    ]));
  });

  it('refuses programs it cannot build, each with its reason', () => {
    expect(() => compileSeccomp('x86_64', [{ syscall: 'frobnicate', errno: EPERM }])).toThrow(
      'seccomp: no syscall number known for frobnicate',
    );
    expect(() =>
      compileSeccomp('x86_64', [
        { syscall: 'bpf', errno: EPERM },
        { syscall: 'bpf', errno: ENOSYS },
      ]),
    ).toThrow('seccomp: two rules for bpf (321)');
    expect(() => compileSeccomp('x86_64', [{ syscall: 'bpf', errno: 0 }])).toThrow('seccomp: errno 0 for bpf is not 1..4095');
    expect(() => compileSeccomp('x86_64', [{ syscall: 'ioctl', errno: EPERM, when: { arg: 6, oneOf: [1] } }])).toThrow(
      'seccomp: argument 6 of ioctl is not 0..5',
    );
    // classic BPF jumps at most 255 instructions ahead
    const many = Array.from({ length: 300 }, (_, i) => i + 1);
    expect(() => compileSeccomp('x86_64', [{ syscall: 'ioctl', errno: EPERM, when: { arg: 1, oneOf: many } }])).toThrow(
      /^seccomp: jump from \d+ to args:0:deny \(\d+\) is out of range \(\d+\); split the program$/,
    );
  });

  it("maps Node's CPU names; this machine has a filter", () => {
    expect([seccompArchOf('x64'), seccompArchOf('arm64'), seccompArchOf('riscv64'), seccompArchOf('ia32')]).toEqual([
      'x86_64',
      'aarch64',
      null,
      null,
    ]);
    const f = hostSeccompFilter();
    expect(f?.arch).toBe(seccompArchOf(process.arch));
    expect(f?.program.length).toBe(compileSeccomp(f!.arch, SANDBOX_RULES).length * 8);
  });
});

// ---------------------------------------------------------------------------------------------
// A classic-BPF interpreter for seccomp programs (only what seccomp allows: ld abs w, jeq/jge/jset
// with constants, ret with a constant), strict about everything else.

function runBpf(program: Buffer, data: { nr: number; arch: number; args?: bigint[] }): number {
  const word = (off: number): number => {
    if (off === 0) return data.nr >>> 0;
    if (off === 4) return data.arch >>> 0;
    const i = (off - 16) / 8;
    if (Number.isInteger(i) && i >= 0 && i < 6) return Number(BigInt.asUintN(64, data.args?.[i] ?? 0n) & 0xffffffffn);
    const hi = (off - 20) / 8;
    if (Number.isInteger(hi) && hi >= 0 && hi < 6) return Number(BigInt.asUintN(64, data.args?.[hi] ?? 0n) >> 32n);
    throw new Error(`load from offset ${off}`);
  };
  const n = program.length / 8;
  let a = 0;
  for (let pc = 0; pc < n;) {
    const code = program.readUInt16LE(pc * 8);
    const jt = program.readUInt8(pc * 8 + 2);
    const jf = program.readUInt8(pc * 8 + 3);
    const k = program.readUInt32LE(pc * 8 + 4);
    if (code === 0x20) {
      a = word(k);
      pc++;
    } else if (code === 0x06) return k;
    else if (code === 0x15 || code === 0x35 || code === 0x45) {
      const taken = code === 0x15 ? a === k : code === 0x35 ? a >= k : (a & k) !== 0;
      pc += 1 + (taken ? jt : jf);
    } else throw new Error(`opcode 0x${code.toString(16)} at ${pc}`);
  }
  throw new Error('ran off the end of the program');
}

const ERR = (e: number) => SECCOMP_RET_ERRNO | e;

describe.each(['x86_64', 'aarch64'] as SeccompArch[])('the sandbox program on %s (interpreted)', (arch) => {
  const { program, denied } = seccompFilter(arch);
  const nr = (name: string) => SYSCALL_NUMBERS[name]![arch]!;
  const call = (name: string, ...args: (number | bigint)[]) =>
    runBpf(program, { nr: nr(name), arch: AUDIT_ARCH[arch], args: args.map(BigInt) });

  it('refuses each listed call with its errno; other calls pass', () => {
    for (const r of SANDBOX_RULES) {
      if (SYSCALL_NUMBERS[r.syscall]![arch] === undefined) continue;
      if (r.when) continue; // below
      expect(call(r.syscall), r.syscall).toBe(ERR(r.errno));
    }
    expect(call('clone3')).toBe(ERR(ENOSYS));
    expect(call('unshare')).toBe(ERR(EPERM));
    // read, write, openat, mmap, futex, process_vm_readv: allowed
    const allowed = arch === 'x86_64' ? [0, 1, 257, 9, 202, 310] : [63, 64, 56, 222, 98, 270];
    for (const n of allowed) expect(runBpf(program, { nr: n, arch: AUDIT_ARCH[arch] }), `nr ${n}`).toBe(SECCOMP_RET_ALLOW);
    expect(denied).toContain('ptrace');
    expect(denied.includes('iopl')).toBe(arch === 'x86_64');
  });

  it('clone: refused with any namespace flag, allowed for fork and threads; only the low word counts', () => {
    expect(call('clone', 0x01200011)).toBe(SECCOMP_RET_ALLOW); // fork(): CHILD_SETTID|CHILD_CLEARTID|SIGCHLD
    expect(call('clone', 0x003d0f00)).toBe(SECCOMP_RET_ALLOW); // pthread_create's flags
    for (const ns of [0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000]) {
      expect(call('clone', ns | 0x11), `flag 0x${ns.toString(16)}`).toBe(ERR(EPERM));
    }
    // the kernel reads clone's flags as 32 bits: bits above them change nothing
    expect(call('clone', 0x10000000_00000011n)).toBe(SECCOMP_RET_ALLOW);
    expect(call('clone', 0xffffffff_10000011n)).toBe(ERR(EPERM));
  });

  it('ioctl: only TIOCSTI and TIOCLINUX are refused (GPU drivers use ioctl for everything else)', () => {
    expect(call('ioctl', 0, TIOCSTI)).toBe(ERR(EPERM));
    expect(call('ioctl', 0, TIOCLINUX)).toBe(ERR(EPERM));
    expect(call('ioctl', 0, 0x1_00005412n)).toBe(ERR(EPERM)); // the kernel takes the request as 32 bits
    expect(call('ioctl', 0, 0x5401)).toBe(SECCOMP_RET_ALLOW); // TCGETS
    expect(call('ioctl', 3, 0xc0104600)).toBe(SECCOMP_RET_ALLOW); // an NVIDIA-style _IOWR request
  });

  it('personality: the default personas and the query pass; ADDR_NO_RANDOMIZE and READ_IMPLIES_EXEC do not', () => {
    for (const p of ALLOWED_PERSONALITIES) expect(call('personality', p)).toBe(SECCOMP_RET_ALLOW);
    expect(call('personality', 0x0040000)).toBe(ERR(EPERM));
    expect(call('personality', 0x0400000)).toBe(ERR(EPERM));
    expect(call('personality', 0x1_00000000n)).toBe(SECCOMP_RET_ALLOW); // = 0 to the kernel
  });

  it('another ABI is killed', () => {
    const foreign = arch === 'x86_64' ? [0x40000003 /* i386 */, AUDIT_ARCH.aarch64] : [0x40000028 /* AArch32 */, AUDIT_ARCH.x86_64];
    for (const a of foreign) expect(runBpf(program, { nr: 39, arch: a })).toBe(SECCOMP_RET_KILL_PROCESS);
    if (arch === 'x86_64') {
      expect(runBpf(program, { nr: 0x40000000 | 39, arch: AUDIT_ARCH.x86_64 })).toBe(SECCOMP_RET_KILL_PROCESS); // x32 getpid
      expect(runBpf(program, { nr: 0xffffffff, arch: AUDIT_ARCH.x86_64 })).toBe(SECCOMP_RET_ALLOW); // -1: ENOSYS from the kernel
    }
  });
});

describe('the kernel accepts the program for the other architecture', () => {
  it("loaded through bwrap here, it passes the kernel's checker and kills the exec (wrong arch), rather than being refused", async () => {
    const other: SeccompArch = seccompArchOf(process.arch) === 'x86_64' ? 'aarch64' : 'x86_64';
    const dir = mkdtempSync(join(tmpdir(), 'chatgpu-seccomp-'));
    try {
      // runAs null: the trial needs no uid switch, and no setpriv runs before the exec is killed
      const c = buildSandboxedCommand({
        sandbox: 'bwrap',
        command: ['/usr/bin/true'],
        workDir: dir,
        env: { PATH: '/usr/bin' },
        runAs: null,
        seccomp: seccompFilter(other),
      });
      const r = await execSandboxed(c, 30_000);
      expect(r.stderr).not.toMatch(/seccomp|Invalid argument/i);
      expect(r.code).toBe(128 + 31); // bwrap reports its child's SIGSYS as 128 + 31
      const same = await execSandboxed(
        buildSandboxedCommand({ sandbox: 'bwrap', command: ['/usr/bin/true'], workDir: dir, env: { PATH: '/usr/bin' }, runAs: null }),
        30_000,
      );
      expect(same).toMatchObject({ code: 0, stderr: '' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
