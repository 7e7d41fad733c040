/**
 * A seccomp filter (classic BPF, as `bwrap --seccomp FD` loads it) that
 * makes ptrace, process_vm_readv/writev and pidfd_getfd fail with EPERM.
 * The sandbox has no PID namespace of its own (the hook checks that a call
 * comes from below `exec`'s PID, which a namespace would hide), so without
 * it a confined process could attach to a process of the same user outside
 * the sandbox, or take one of its file descriptors, and write through it.
 * A system call of another ABI (i386 or x32 on x86-64) fails whole.
 *
 * It also keeps a confined process from signalling the processes that end
 * the sandbox: kill, tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo and
 * pidfd_open fail with EPERM when their first argument (the process, or
 * the group as its negative) is one of `protect`, or -1 (every process the
 * user may signal); tkill (a thread alone, whichever process it is in)
 * always fails, and pidfd_send_signal (whose process cannot be seen in its
 * arguments: a pidfd may be an open /proc/PID) fails with ENOSYS, so a
 * caller falls back to kill. The kernel also sends a signal for a process:
 * to the owner of a file descriptor set for asynchronous I/O, so fcntl
 * F_SETOWN, F_SETOWN_EX and F_SETSIG, and ioctl FIOSETOWN and SIOCSPGRP,
 * fail with EPERM whatever their target (a confined process could name
 * exec's PID as the owner of a pipe and have SIGKILL sent to it). Other
 * processes of the same user outside stay reachable by a signal: SECURITY.md
 * says so.
 */

/** The architectures the filter knows, as `process.arch` names them. */
const ARCHES = {
  // ptrace, process_vm_readv, process_vm_writev, pidfd_getfd; tkill; kill, tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo, pidfd_open.
  // fcntl and ioctl: their second argument names what they do.
  x64: { audit: 0xc000003e, blocked: [101, 310, 311, 438, 200], signals: [62, 234, 129, 297, 434], fcntl: 72, ioctl: 16, x32: true },
  arm64: { audit: 0xc00000b7, blocked: [117, 270, 271, 438, 130], signals: [129, 131, 138, 240, 434], fcntl: 25, ioctl: 29, x32: false },
} as const;
/** fcntl's F_SETOWN, F_SETSIG and F_SETOWN_EX; ioctl's FIOSETOWN and SIOCSPGRP: each makes the kernel signal a process named in it. */
const FCNTL_SIGNAL_OWNER = [8, 10, 15];
const IOCTL_SIGNAL_OWNER = [0x8901, 0x8902];
const PIDFD_SEND_SIGNAL = 424;

const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const RET_K = 0x06;
const SECCOMP_RET_ALLOW = 0x7fff0000;
const SECCOMP_RET_ERRNO_EPERM = 0x00050000 | 1;
const SECCOMP_RET_ERRNO_ENOSYS = 0x00050000 | 38;
/** Offsets in struct seccomp_data: the system call's number, its audit architecture, the low word of its first argument. */
const NR = 0;
const ARCH = 4;
const ARG0_LOW = 16;
const ARG1_LOW = 24;
const X32_BIT = 0x40000000;

/**
 * The filter's bytes for `arch` (`process.arch`), or undefined where it does
 * not know the system call numbers. `protect`: the PIDs no confined process
 * may signal (each as a process and as a process group).
 */
export function seccompFilter(arch: string = process.arch, protect: readonly number[] = []): Buffer | undefined {
  const spec = (ARCHES as Record<string, (typeof ARCHES)[keyof typeof ARCHES]>)[arch];
  if (!spec) return undefined;
  // The first argument is an int: the kernel reads its low 32 bits, so those are compared (as unsigned: -1 is 0xffffffff).
  const values = [0xffffffff, ...protect.flatMap((pid) => [pid >>> 0, -pid >>> 0])];
  // Instructions with symbolic jump targets, resolved once every label's place is known. Every jump is forward.
  type Target = "allow" | "deny" | "enosys" | "args" | "fcntl" | "ioctl";
  const program: { code: number; jt?: Target; jf?: Target; k: number }[] = [];
  program.push({ code: LD_W_ABS, k: ARCH });
  program.push({ code: JEQ_K, jf: "deny", k: spec.audit });
  program.push({ code: LD_W_ABS, k: NR });
  if (spec.x32) program.push({ code: JGE_K, jt: "deny", k: X32_BIT });
  for (const nr of spec.blocked) program.push({ code: JEQ_K, jt: "deny", k: nr });
  program.push({ code: JEQ_K, jt: "enosys", k: PIDFD_SEND_SIGNAL });
  for (const nr of spec.signals) program.push({ code: JEQ_K, jt: "args", k: nr });
  program.push({ code: JEQ_K, jt: "fcntl", k: spec.fcntl });
  program.push({ code: JEQ_K, jt: "ioctl", k: spec.ioctl });
  program.push({ code: RET_K, k: SECCOMP_RET_ALLOW });
  const labels: Record<Target, number> = { args: program.length, allow: 0, deny: 0, enosys: 0, fcntl: 0, ioctl: 0 };
  program.push({ code: LD_W_ABS, k: ARG0_LOW });
  for (const v of values) program.push({ code: JEQ_K, jt: "deny", k: v });
  program.push({ code: RET_K, k: SECCOMP_RET_ALLOW });
  // The command is an int (fcntl) or an unsigned int (ioctl): its low 32 bits.
  labels.fcntl = program.length;
  program.push({ code: LD_W_ABS, k: ARG1_LOW });
  for (const v of FCNTL_SIGNAL_OWNER) program.push({ code: JEQ_K, jt: "deny", k: v });
  program.push({ code: RET_K, k: SECCOMP_RET_ALLOW });
  labels.ioctl = program.length;
  program.push({ code: LD_W_ABS, k: ARG1_LOW });
  for (const v of IOCTL_SIGNAL_OWNER) program.push({ code: JEQ_K, jt: "deny", k: v });
  labels.allow = program.length;
  program.push({ code: RET_K, k: SECCOMP_RET_ALLOW });
  labels.deny = program.length;
  program.push({ code: RET_K, k: SECCOMP_RET_ERRNO_EPERM });
  labels.enosys = program.length;
  program.push({ code: RET_K, k: SECCOMP_RET_ERRNO_ENOSYS });
  const out = Buffer.alloc(program.length * 8);
  program.forEach(({ code, jt, jf, k }, i) => {
    const offset = (t: Target | undefined) => {
      if (t === undefined) return 0;
      const d = labels[t] - i - 1;
      if (d < 0 || d > 255) throw new Error("seccomp filter: a jump does not fit in one byte");
      return d;
    };
    out.writeUInt16LE(code, i * 8);
    out.writeUInt8(offset(jt), i * 8 + 2);
    out.writeUInt8(offset(jf), i * 8 + 3);
    out.writeUInt32LE(k >>> 0, i * 8 + 4);
  });
  return out;
}
