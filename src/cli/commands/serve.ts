import { ensureCheckWebhook, type GitHubAppFlags, parseGitHubAppFlags } from "../../github/github-app-options.js";
import { gitHubCheckChannel } from "../../github/github-check-channel.js";
import { startGateServer } from "../../server/start-gate-server.js";
import type { CommandResult, CommonOptions } from "../command-result.js";
import { storeOption } from "../home-option.js";

/**
 * `twinlock serve`: run the gate server until SIGTERM or SIGINT, then stop
 * taking requests, let those in flight finish, and exit 0. One access-log
 * line per request goes to stderr as JSON (no tokens, cookies or bodies).
 */
export async function runServe(
  o: CommonOptions & {
    store?: string;
    listen?: string;
    tlsCert?: string;
    tlsKey?: string;
    insecureHttp?: boolean;
    origin?: string;
    quiet?: boolean;
    handoffRoot?: string;
    trustedProxy?: string[];
  } & GitHubAppFlags,
): Promise<CommandResult> {
  // Every option is checked before the store is opened: a bad one starts nothing.
  const github = parseGitHubAppFlags(o);
  const store = storeOption(o);
  // The store must be able to serve (a database reachable and at this build's schema) before any request is.
  await store.ready();
  if (github) await ensureCheckWebhook(store, github.apiBase, new Date());
  // The check links to the gate's pages, whose origin is known once the server listens.
  let origin: string | undefined;
  const checks = github ? gitHubCheckChannel({ config: github, store, origin: () => origin }) : undefined;
  const running = await startGateServer({
    store,
    listen: o.listen,
    tlsCert: o.tlsCert,
    tlsKey: o.tlsKey,
    insecureHttp: o.insecureHttp,
    origin: o.origin,
    handoffRoot: o.handoffRoot,
    trustedProxies: o.trustedProxy,
    ...(checks ? { notify: { channels: { "github-check": checks } } } : {}),
    log: o.quiet ? undefined : (entry) => process.stderr.write(`${JSON.stringify(entry)}\n`),
  });
  origin = running.origin;
  process.stdout.write(`twinlock serve: listening on ${running.url} (open ${running.origin}); stop with Ctrl-C\n`);
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once("SIGTERM", () => resolve("SIGTERM"));
    process.once("SIGINT", () => resolve("SIGINT"));
  });
  await running.close();
  await store.close();
  return {
    exitCode: 0,
    text: `twinlock serve: stopped (${signal}) after finishing the requests in flight`,
    json: { ok: true, stopped: signal },
  };
}
