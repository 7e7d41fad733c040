import { describe, expect, it } from "vitest";
import { bubblewrapArgv } from "./bubblewrap-argv.js";

describe("bubblewrapArgv", () => {
  it("makes a user namespace with no capabilities and no further user namespaces (root included), mounts the root read-only, then only the runtime entries of the state folder writable (read-only again inside them where asked), then the targets, and runs the command in its folder", () => {
    const argv = bubblewrapArgv({
      bwrap: "/usr/bin/bwrap",
      cmd: ["codex", "exec", "x"],
      cwd: "/p",
      writable: ["/p/cart/cache.go", "/s/tmp"],
      state: [{ dir: "/h/.claude", writable: ["/h/.claude/projects/-p"], readOnly: ["/h/.claude/projects/-p/memory"] }],
      seccompFd: 3,
      infoFd: 4,
    });
    expect(argv).toEqual([
      "/usr/bin/bwrap",
      "--unshare-user",
      "--disable-userns",
      "--unshare-ipc",
      "--unshare-pid",
      "--cap-drop",
      "ALL",
      "--die-with-parent",
      "--new-session",
      "--ro-bind",
      "/",
      "/",
      "--dev",
      "/dev",
      "--proc",
      "/proc",
      "--bind",
      "/h/.claude/projects/-p",
      "/h/.claude/projects/-p",
      "--ro-bind",
      "/h/.claude/projects/-p/memory",
      "/h/.claude/projects/-p/memory",
      "--bind",
      "/p/cart/cache.go",
      "/p/cart/cache.go",
      "--bind",
      "/s/tmp",
      "/s/tmp",
      "--seccomp",
      "3",
      "--info-fd",
      "4",
      "--chdir",
      "/p",
      "--",
      "codex",
      "exec",
      "x",
    ]);
  });

  it("passes a command whose arguments look like bwrap options after `--`, untouched", () => {
    const argv = bubblewrapArgv({
      bwrap: "/b",
      cmd: ["gemini", "--bind", "/", "/"],
      cwd: "/",
      writable: [],
      state: [],
      seccompFd: 3,
      infoFd: 4,
    });
    expect(argv.slice(argv.indexOf("--") + 1)).toEqual(["gemini", "--bind", "/", "/"]);
    expect(argv.filter((a) => a === "--bind")).toHaveLength(1);
  });

  it("mounts a private top level over the state folder first, its old entries read-only in it, then the runtime entries writable and read-only again inside them", () => {
    const argv = bubblewrapArgv({
      bwrap: "/b",
      cmd: ["gemini"],
      cwd: "/p",
      writable: [],
      state: [
        {
          dir: "/h/.gemini",
          top: { folder: "/s/private/top", mirror: ["/h/.gemini/settings.json", "/h/.gemini/tmp"] },
          writable: ["/h/.gemini/tmp"],
          readOnly: ["/h/.gemini/tmp/bin"],
        },
      ],
      seccompFd: 3,
      infoFd: 4,
    });
    const mounts = argv.slice(argv.indexOf("/proc") + 1, argv.indexOf("--seccomp"));
    expect(mounts).toEqual([
      "--bind",
      "/s/private/top",
      "/h/.gemini",
      "--ro-bind",
      "/h/.gemini/settings.json",
      "/h/.gemini/settings.json",
      "--ro-bind",
      "/h/.gemini/tmp",
      "/h/.gemini/tmp",
      "--bind",
      "/h/.gemini/tmp",
      "/h/.gemini/tmp",
      "--ro-bind",
      "/h/.gemini/tmp/bin",
      "/h/.gemini/tmp/bin",
    ]);
  });
});
