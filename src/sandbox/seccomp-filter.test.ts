import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { seccompFilter } from "./seccomp-filter.js";

const ALLOW = 0x7fff0000;
const EPERM = 0x00050001;
const AUDIT = { x64: 0xc000003e, arm64: 0xc00000b7 } as const;
const ENOSYS = 0x00050026;
const BLOCKED = { x64: [101, 310, 311, 438, 200], arm64: [117, 270, 271, 438, 130] } as const;
/** kill, tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo, pidfd_open: judged by their first argument. */
const SIGNALS = { x64: [62, 234, 129, 297, 434], arm64: [129, 131, 138, 240, 434] } as const;
const PIDFD_SEND_SIGNAL = 424;
/** fcntl and ioctl, judged by their second argument: the commands that make the kernel signal an owner. */
const OWNER_CALLS = { x64: { fcntl: 72, ioctl: 16 }, arm64: { fcntl: 25, ioctl: 29 } } as const;
const FCNTL_OWNER = [8, 10, 15];
const IOCTL_OWNER = [0x8901, 0x8902];

/** A classic-BPF interpreter for the four instructions the filter uses, run on one system call. */
function run(program: Buffer, arch: number, nr: number, arg0 = 0n, arg1 = 0n): number {
  let a = 0;
  for (let pc = 0; pc * 8 < program.length; ) {
    const code = program.readUInt16LE(pc * 8);
    const jt = program.readUInt8(pc * 8 + 2);
    const jf = program.readUInt8(pc * 8 + 3);
    const k = program.readUInt32LE(pc * 8 + 4);
    if (code === 0x20) {
      a = k === 0 ? nr : k === 4 ? arch : k === 16 ? Number(arg0 & 0xffffffffn) : k === 24 ? Number(arg1 & 0xffffffffn) : Number.NaN;
      pc += 1;
    } else if (code === 0x15) pc += 1 + (a === k ? jt : jf);
    else if (code === 0x35) pc += 1 + (a >= k ? jt : jf);
    else if (code === 0x06) return k;
    else throw new Error(`unknown instruction ${code}`);
  }
  throw new Error("the program ran off its end");
}

describe("seccompFilter", () => {
  for (const arch of ["x64", "arm64"] as const)
    it(`on ${arch}, fails ptrace, process_vm_readv/writev, pidfd_getfd and tkill with EPERM, pidfd_send_signal with ENOSYS, and allows every other system call with another first argument`, () => {
      const program = seccompFilter(arch) as Buffer;
      for (const nr of BLOCKED[arch]) expect(run(program, AUDIT[arch], nr)).toBe(EPERM);
      expect(run(program, AUDIT[arch], PIDFD_SEND_SIGNAL)).toBe(ENOSYS);
      fc.assert(
        fc.property(fc.integer({ min: 0, max: 0x3fffffff }), fc.integer({ min: 0, max: 0x7ffffffe }), (nr, arg) => {
          const want = (BLOCKED[arch] as readonly number[]).includes(nr) ? EPERM : nr === PIDFD_SEND_SIGNAL ? ENOSYS : ALLOW;
          expect(run(program, AUDIT[arch], nr, BigInt(arg))).toBe(want);
        }),
      );
    });

  for (const arch of ["x64", "arm64"] as const)
    it(`on ${arch}, fails a signal to a protected process, to its group, or to every process (-1), however the upper word of the argument is set`, () => {
      const program = seccompFilter(arch, [4242, 77]) as Buffer;
      fc.assert(
        fc.property(
          fc.constantFrom(...SIGNALS[arch]),
          fc.constantFrom(4242, -4242, 77, -77, -1),
          fc.bigInt({ min: 0n, max: 0xffffffffn }),
          (nr, pid, upper) => {
            expect(run(program, AUDIT[arch], nr, (upper << 32n) | BigInt(pid >>> 0))).toBe(EPERM);
          },
        ),
      );
      fc.assert(
        fc.property(fc.constantFrom(...SIGNALS[arch]), fc.integer({ min: -0x7fffffff, max: 0x7fffffff }), (nr, pid) => {
          fc.pre(![4242, -4242, 77, -77, -1].includes(pid));
          expect(run(program, AUDIT[arch], nr, BigInt(pid >>> 0))).toBe(ALLOW);
        }),
      );
    });

  for (const arch of ["x64", "arm64"] as const)
    it(`on ${arch}, fails fcntl F_SETOWN, F_SETSIG and F_SETOWN_EX and ioctl FIOSETOWN and SIOCSPGRP whatever their target, and allows their other commands`, () => {
      // A confined process could name exec's PID as the owner of a pipe set for asynchronous I/O and have the kernel send it SIGKILL.
      const program = seccompFilter(arch, [4242]) as Buffer;
      const { fcntl, ioctl } = OWNER_CALLS[arch];
      fc.assert(
        fc.property(fc.bigInt({ min: 0n, max: 0xffffffffn }), fc.bigInt({ min: 0n, max: 0xffffffffn }), (target, upper) => {
          for (const cmd of FCNTL_OWNER) expect(run(program, AUDIT[arch], fcntl, target, (upper << 32n) | BigInt(cmd))).toBe(EPERM);
          for (const cmd of IOCTL_OWNER) expect(run(program, AUDIT[arch], ioctl, target, (upper << 32n) | BigInt(cmd))).toBe(EPERM);
        }),
      );
      fc.assert(
        fc.property(fc.integer({ min: 0, max: 0xffffffff }), fc.bigInt({ min: 0n, max: 0xffffffffn }), (cmd, fd) => {
          fc.pre(!FCNTL_OWNER.includes(cmd) && !IOCTL_OWNER.includes(cmd));
          expect(run(program, AUDIT[arch], fcntl, fd, BigInt(cmd))).toBe(ALLOW);
          expect(run(program, AUDIT[arch], ioctl, fd, BigInt(cmd))).toBe(ALLOW);
        }),
      );
    });

  it("fails every system call of another ABI (i386 on x86-64, x32)", () => {
    const program = seccompFilter("x64") as Buffer;
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 600 }), (nr) => {
        expect(run(program, 0x40000003, nr)).toBe(EPERM);
      }),
    );
    expect(run(program, AUDIT.x64, 0x40000000 + 521)).toBe(EPERM);
  });

  it("has no filter for an architecture whose system call numbers it does not know", () => {
    expect(seccompFilter("riscv64")).toBeUndefined();
    expect(seccompFilter("ia32")).toBeUndefined();
  });
});
