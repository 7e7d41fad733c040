import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { seccompFilter } from "./seccomp-filter.js";

const ALLOW = 0x7fff0000;
const EPERM = 0x00050001;
const AUDIT = { x64: 0xc000003e, arm64: 0xc00000b7 } as const;
const BLOCKED = { x64: [101, 310, 311, 438], arm64: [117, 270, 271, 438] } as const;

/** A classic-BPF interpreter for the four instructions the filter uses, run on one system call. */
function run(program: Buffer, arch: number, nr: number): number {
  let a = 0;
  for (let pc = 0; pc * 8 < program.length; ) {
    const code = program.readUInt16LE(pc * 8);
    const jt = program.readUInt8(pc * 8 + 2);
    const jf = program.readUInt8(pc * 8 + 3);
    const k = program.readUInt32LE(pc * 8 + 4);
    if (code === 0x20) {
      a = k === 0 ? nr : k === 4 ? arch : Number.NaN;
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
    it(`on ${arch}, fails ptrace, process_vm_readv/writev and pidfd_getfd with EPERM and allows every other system call`, () => {
      const program = seccompFilter(arch) as Buffer;
      for (const nr of BLOCKED[arch]) expect(run(program, AUDIT[arch], nr)).toBe(EPERM);
      fc.assert(
        fc.property(fc.integer({ min: 0, max: 0x3fffffff }), (nr) => {
          expect(run(program, AUDIT[arch], nr)).toBe((BLOCKED[arch] as readonly number[]).includes(nr) ? EPERM : ALLOW);
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
