/** Types of crash-sequence.mjs (plain JavaScript so the writer process can load it without a compiler). */
export declare const CRASH_EPOCH: number;
export declare function runCrashCommand(
  lib: {
    raiseStop: (input: never) => Promise<unknown>;
    resolveStop: (input: never) => Promise<unknown>;
    openGateHome: (dir?: string) => unknown;
    folderRunStore: (home: never) => unknown;
  },
  runFile: string,
  k: number,
  homeDir: string,
): Promise<void>;
