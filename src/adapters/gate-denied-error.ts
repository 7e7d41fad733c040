/** A tool call the gate denied, thrown where an SDK shows a tool's error to the model; `message` is the reason. */
export class GateDeniedError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = "GateDeniedError";
  }
}
