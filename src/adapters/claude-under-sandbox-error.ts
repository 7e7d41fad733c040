/**
 * Thrown by `twinlock/claude-agent-sdk` when it is loaded inside twinlock's
 * bubblewrap sandbox: the Claude Code the SDK starts waits there for its
 * model, silent, until killed. Its message is the
 * one line to show, naming what to run instead.
 */
export class ClaudeUnderSandboxError extends Error {
  readonly code = "TWINLOCK_CLAUDE_UNDER_SANDBOX";
  constructor() {
    super(
      "twinlock/claude-agent-sdk does not run under --sandbox: the Claude Code it starts waits there for its model, silent, until killed; run exec or plan with --hook-only instead (the adapter's hooks judge every tool call) and confine the process another way if you need to (a container, an OS account)",
    );
    this.name = "ClaudeUnderSandboxError";
  }
}
