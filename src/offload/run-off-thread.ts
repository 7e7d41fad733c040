import { AsyncLocalStorage } from "node:async_hooks";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { isErrorCode } from "../errors/error-codes.js";
import { ConflictError, IntegrityError, RefusalError, TwinlockError, UsageError } from "../errors/errors.js";
import type { OffloadTasks } from "./offload-tasks.js";

/** At most this many worker threads: on a small machine two freezes (or a freeze and a readiness) run side by side. */
const MAX_WORKERS = 2;

/** Each worker's heap limit: records within their budgets (16 MiB each) parse in a fraction of it. */
const WORKER_HEAP_MB = 2048;

/** An error as it crosses from the worker: its class by name, and the data each class carries. */
export interface CarriedError {
  name: string;
  message: string;
  stack?: string;
  details?: Record<string, unknown>;
  retryable?: boolean;
  /** A TwinlockError's code (src/errors/error-codes.ts). */
  code?: string;
}

type Reply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: CarriedError };

interface Job {
  /** Whose work it is (`inOffloadLane`); undefined outside any lane. */
  lane?: string;
  task: string;
  input: unknown;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

interface Slot {
  worker: Worker;
  job?: Job & { id: number };
}

const slots: Slot[] = [];
const queue: Job[] = [];
let nextId = 1;

const lanes = new AsyncLocalStorage<string>();

/**
 * Run `work` with every task it sends off the thread in `lane` (a server
 * names each caller's: an agent token, a reviewer, the anonymous): a lane
 * runs one task at a time, and a free worker takes the oldest task of the
 * lane that waited longest for a turn, so one caller's queue of freezes
 * never holds every worker while another's page waits.
 */
export function inOffloadLane<T>(lane: string, work: () => T): T {
  return lanes.run(lane, work);
}

/**
 * Run one task of `offload-tasks.ts` on a worker thread and resolve to its
 * answer: the agent-sized work (copying and hashing a handoff, listing the
 * home's frozen files, parsing and judging records) costs the calling
 * thread's event loop nothing but the messages. A refusal, usage or
 * integrity error thrown there is thrown here as the same class with the
 * same data. A worker that dies (out of memory on a hostile record, say)
 * fails its task with an internal error and is replaced by the next task.
 * The workers do not keep the process alive when idle.
 */
export function runOffThread<K extends keyof OffloadTasks>(
  task: K,
  input: Parameters<OffloadTasks[K]>[0],
): Promise<Awaited<ReturnType<OffloadTasks[K]>>> {
  return new Promise((resolve, reject) => {
    queue.push({ lane: lanes.getStore(), task, input, resolve: resolve as (value: unknown) => void, reject });
    dispatch();
  });
}

/** End every worker thread (tests, and a server that stops); a task under way fails. */
export async function stopOffThreadWorkers(): Promise<void> {
  await Promise.all(slots.splice(0).map((s) => s.worker.terminate()));
}

function dispatch(): void {
  while (queue.length > 0 && nextJob() >= 0) {
    let slot = slots.find((s) => s.job === undefined);
    if (!slot && slots.length < MAX_WORKERS) {
      slot = { worker: startWorker() };
      watch(slot);
      slots.push(slot);
    }
    if (!slot) return;
    const next = nextJob();
    if (next < 0) return;
    const [job] = queue.splice(next, 1) as [Job];
    if (job.lane !== undefined) {
      // Forgotten lanes are forgotten in the order they were served: the map stays as small as the lanes in use.
      lastServed.delete(job.lane);
      lastServed.set(job.lane, dispatches++);
      if (lastServed.size > 10_000) lastServed.delete(lastServed.keys().next().value as string);
    }
    const id = nextId++;
    slot.job = { ...job, id };
    slot.worker.ref();
    try {
      slot.worker.postMessage({ id, task: job.task, input: job.input });
    } catch (error) {
      // Input that cannot be cloned: the caller's bug, said as it is.
      slot.job = undefined;
      slot.worker.unref();
      job.reject(error);
    }
  }
}

/** When each lane was last given a worker (a count of dispatches), for taking turns. */
const lastServed = new Map<string, number>();
let dispatches = 0;

/**
 * The index of the next job to run: of the lanes with no job running, the
 * one served longest ago (never served first), its oldest job; a job
 * outside any lane may always run, in its turn in the queue.
 */
function nextJob(): number {
  const busy = new Set(slots.map((s) => s.job?.lane).filter((l) => l !== undefined));
  let best = -1;
  let bestServed = Number.POSITIVE_INFINITY;
  for (let i = 0; i < queue.length; i++) {
    const lane = (queue[i] as Job).lane;
    if (lane !== undefined && busy.has(lane)) continue;
    const served = lane === undefined ? -1 : (lastServed.get(lane) ?? -1);
    if (served < bestServed) {
      best = i;
      bestServed = served;
    }
  }
  return best;
}

function watch(slot: Slot): void {
  const { worker } = slot;
  worker.on("message", (reply: Reply) => {
    const job = slot.job;
    if (!job || job.id !== reply.id) return;
    slot.job = undefined;
    worker.unref();
    if (reply.ok) job.resolve(reply.value);
    else job.reject(revive(reply.error));
    dispatch();
  });
  const gone = (why: string) => {
    const at = slots.indexOf(slot);
    if (at >= 0) slots.splice(at, 1);
    const job = slot.job;
    slot.job = undefined;
    job?.reject(new Error(`the worker thread running ${job.task} stopped (${why})`));
    dispatch();
  };
  worker.on("error", (error) => gone(error?.stack ?? String(error)));
  worker.on("exit", (code) => gone(`exit ${code}`));
  worker.unref();
}

/**
 * A worker running `offload-worker`, however twinlock runs: from source
 * (TypeScript, under vitest or tsx: a bootstrap registers tsx in the worker
 * first), as tsc's output in dist/, or as the one-file CLI bundle, which
 * starts itself again (src/cli/bin.ts serves the tasks when `workerData`
 * asks for them).
 */
function startWorker(): Worker {
  const here = import.meta.url;
  // A heap of its own with a ceiling: a task that runs out of memory ends its worker (ERR_WORKER_OUT_OF_MEMORY), not the server.
  const options = {
    workerData: { twinlockOffload: true, entry: new URL("./offload-worker.ts", here).href },
    resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
  };
  if (here.endsWith(".ts")) return new Worker(new URL("./ts-worker.mjs", here), options);
  if (here.endsWith(".cjs")) return new Worker(fileURLToPath(here), options);
  return new Worker(new URL("./offload-worker.js", here), options);
}

/** The error a worker threw, as the class it was (an unknown one becomes a plain Error: an internal error). */
export function revive(e: CarriedError): Error {
  let error: Error;
  const code = isErrorCode(e.code) ? { code: e.code } : {};
  if (e.name === "RefusalError") error = new RefusalError(e.message, e.details ?? {}, code);
  else if (e.name === "IntegrityError") error = new IntegrityError(e.message, e.details ?? {}, code);
  else if (e.name === "UsageError") error = new UsageError(e.message, code);
  else if (e.name === "ConflictError") error = new ConflictError(e.message, { retryable: e.retryable, ...code });
  else {
    error = new Error(e.message);
    error.name = e.name;
  }
  if (e.stack) error.stack = e.stack;
  return error;
}

/** An error thrown by a task, as it can cross to the calling thread. */
export function carry(error: unknown): CarriedError {
  if (!(error instanceof Error)) return { name: "Error", message: String(error) };
  const withData = error as Error & { details?: Record<string, unknown>; retryable?: boolean };
  const code = error instanceof TwinlockError ? { code: error.code } : {};
  return {
    name: error.name,
    message: error.message,
    stack: error.stack,
    ...(withData.details ? { details: withData.details } : {}),
    ...(withData.retryable !== undefined ? { retryable: withData.retryable } : {}),
    ...code,
  };
}
