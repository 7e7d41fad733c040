// The worker thread's entry when twinlock runs from source (vitest, tsx): TypeScript loads once tsx is registered here.
import { workerData } from "node:worker_threads";
import { register } from "tsx/esm/api";

register();
await import(workerData.entry);
