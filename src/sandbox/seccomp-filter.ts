/**
 * A seccomp filter (classic BPF, as `bwrap --seccomp FD` loads it) that
 * makes ptrace, process_vm_readv/writev and pidfd_getfd fail with EPERM.
 * The sandbox has no PID namespace of its own (the hook checks that a call
 * comes from below `exec`'s PID, which a namespace would hide), so without
 * it a confined process could attach to a process of the same user outside
 * the sandbox, or take one of its file descriptors, and write through it.
 * A system call of another ABI (i386 or x32 on x86-64) fails whole.
 */

/** The architectures the filter knows, as `process.arch` names them. */
const ARCHES = {
  x64: { audit: 0xc000003e, blocked: [101, 310, 311, 438], x32: true },
  arm64: { audit: 0xc00000b7, blocked: [117, 270, 271, 438], x32: false },
} as const;

const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const RET_K = 0x06;
const SECCOMP_RET_ALLOW = 0x7fff0000;
const SECCOMP_RET_ERRNO_EPERM = 0x00050000 | 1;
/** Offsets in struct seccomp_data: the system call's number, then its audit architecture. */
const NR = 0;
const ARCH = 4;
const X32_BIT = 0x40000000;

/** The filter's bytes for `arch` (`process.arch`), or undefined where it does not know the system call numbers. */
export function seccompFilter(arch: string = process.arch): Buffer | undefined {
  const spec = (ARCHES as Record<string, (typeof ARCHES)[keyof typeof ARCHES]>)[arch];
  if (!spec) return undefined;
  // Every jump is forward, to the ALLOW or the DENY at the end: `deny(i)` is the offset from instruction i to DENY.
  const program: [number, number, number, number][] = [];
  const body = 3 + (spec.x32 ? 1 : 0) + spec.blocked.length;
  const allowAt = body;
  const denyAt = body + 1;
  const deny = (i: number) => denyAt - i - 1;
  program.push([LD_W_ABS, 0, 0, ARCH]);
  program.push([JEQ_K, 0, deny(1), spec.audit]);
  program.push([LD_W_ABS, 0, 0, NR]);
  if (spec.x32) program.push([JGE_K, deny(program.length), 0, X32_BIT]);
  for (const nr of spec.blocked) program.push([JEQ_K, deny(program.length), 0, nr]);
  if (program.length !== allowAt) throw new Error("seccomp filter: the program's length is not the one its jumps assume");
  program.push([RET_K, 0, 0, SECCOMP_RET_ALLOW]);
  program.push([RET_K, 0, 0, SECCOMP_RET_ERRNO_EPERM]);
  const out = Buffer.alloc(program.length * 8);
  program.forEach(([code, jt, jf, k], i) => {
    out.writeUInt16LE(code, i * 8);
    out.writeUInt8(jt, i * 8 + 2);
    out.writeUInt8(jf, i * 8 + 3);
    out.writeUInt32LE(k >>> 0, i * 8 + 4);
  });
  return out;
}
