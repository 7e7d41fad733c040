import type { Command } from "commander";
import type { CommandResult } from "./command-result.js";

type Sink = (result: CommandResult) => void;

/**
 * Declare every command, or with `only` the one command of that name (the
 * others are passed over unbuilt: a call runs one command, and building fifty
 * costs every call a few milliseconds). Each action imports its module only
 * when it runs, so `twinlock --help` stays fast however large the command set grows.
 */
export function registerCommands(all: Command, sink: Sink, only?: string): void {
  const program = only === undefined ? all : oneCommandOf(all, only);
  program
    .command("validate")
    .description("run every suite check and print the pair count and problems")
    .option("--suite <dir>", "suite folder (default: TWINLOCK_SUITE, else nearest twinlock.yaml upward)")
    .option("--expect-pairs <n>", "fail unless the suite has exactly N genuine pairs")
    .option("--fix", "show, as a diff, the pair metadata and body-block skeletons the prompts lack")
    .option("--write", "with --fix: write them (no file that changed since it was read)")
    .action(async (opts) =>
      sink(
        opts.fix
          ? await (await import("./commands/validate-fix.js")).runValidateFix(opts)
          : (await import("./commands/validate.js")).runValidate(opts),
      ),
    );

  program
    .command("audit-bodies")
    .description("check prompt bodies for the required blocks, markers and phrases")
    .option("--suite <dir>", "suite folder")
    .option("--check", "exit 1 when any problem is found")
    .action(async (opts) => sink((await import("./commands/audit-bodies.js")).runAuditBodies(opts)));

  program
    .command("graph")
    .description("build the capability graph (json, dot or mermaid); --check compares it with the committed file")
    .option("--suite <dir>", "suite folder")
    .option("--format <format>", "json, dot or mermaid (default: from --out, else json)")
    .option("--out <file>", "write the graph to FILE")
    .option("--check", "fail when FILE (or the suite's graph_file, or capability-graph.json) is stale")
    .action(async (opts) => sink((await import("./commands/graph.js")).runGraph(opts)));

  program
    .command("new-pair")
    .description("scaffold a correct planner + executor pair into the suite")
    .option("--suite <dir>", "suite folder")
    .requiredOption("--planner <id>", "planner prompt ID, e.g. MD-41")
    .requiredOption("--executor <id>", "executor prompt ID, e.g. MD-42")
    .requiredOption("--planner-title <title>", "planner title")
    .requiredOption("--executor-title <title>", "executor title (the consent question names it)")
    .requiredOption("--category <name>", "category, e.g. debugging")
    .option("--risk <level>", "low, medium or high", "medium")
    .option("--requires <ids>", "comma-separated prompt IDs both prompts require")
    .option("--dir <folder>", "folder inside the suite (default: the category)")
    .action(async (opts) => sink((await import("./commands/new-pair.js")).runNewPair(opts)));

  program
    .command("init-run")
    .description("create a run file for one or more pairs")
    .argument("<run>", "run file to create (refuses to overwrite)")
    .option("--suite <dir>", "suite folder")
    .requiredOption("--planner <id>", "planner of a pair (repeat for a composite run)", collect, [])
    .option("--mode <mode>", "DRAFT_ONLY, APPLY_SAFE, APPLY_APPROVED or VERIFY_ONLY (default DRAFT_ONLY)")
    .option("--environment <name>", "environment the executor may act in (default: default)")
    .option("--actions <ids>", "comma-separated +ACTION IDs the executor may run, or all (default)")
    .option("--budget <n>", "most actions one admission may run")
    .option(
      "--for-change <ref>",
      "the change the run is for: OWNER/REPO#PR or OWNER/REPO@BRANCH (verify --change refuses it for any other)",
    )
    .option("--actor <name>", "who creates the run")
    .action(async (run, opts) => sink(await (await import("./commands/init-run.js")).runInitRun(run, opts)));

  program
    .command("readiness")
    .description("check a handoff folder is ready to freeze")
    .argument("<dir>", "handoff folder")
    .option(
      "--suite <dir>",
      "suite whose twinlock.yaml names the handoff format (default: TWINLOCK_SUITE, else nearest twinlock.yaml upward, else the twinlock format)",
    )
    .option("--format <name>", "twinlock or mission-directives, instead of a suite's format")
    .action(async (dir, opts) => sink((await import("./commands/readiness.js")).runReadiness(dir, opts)));

  program
    .command("hash")
    .description("print the handoff hash of a folder")
    .argument("<dir>", "handoff folder")
    .option("--expect <hash>", "exit 1 unless the hash equals this")
    .action(async (dir, opts) => sink(await (await import("./commands/hash.js")).runHash(dir, opts)));

  program
    .command("freeze-pair-handoff")
    .description("verify readiness, hash and freeze a pair's handoff for review")
    .argument("<run>", "run file")
    .argument("<planner>", "planner ID")
    .option("--handoff <dir>", "handoff folder (default: the one frozen before)")
    .option("--handoff-hash <hash>", "assert the hash; refused unless it equals the computed one")
    .option("--unchanged-because <text>", "re-freeze an unrevised handoff after requested changes, saying why")
    .option("--actor <name>", "who freezes (with --key: the key's owner)")
    .option("--key <file>", "sign the freeze with a key holding the freeze right (default: TWINLOCK_KEY); required on signing suites")
    .action(async (run, id, opts) => sink(await (await import("./commands/freeze.js")).runFreeze(run, id, opts)));

  program
    .command("present")
    .description("show the frozen plan as Markdown, with what changed, the hash and the commands to decide")
    .argument("<run>", "run file")
    .argument("<planner>", "planner ID")
    .action(async (run, id, opts) => sink(await (await import("./commands/present.js")).runPresent(run, id, opts)));

  program
    .command("review-pair-plan")
    .description("record a review decision bound to the frozen hash")
    .argument("<run>", "run file")
    .argument("<planner>", "planner ID")
    .requiredOption("--decision <decision>", "changes_requested, approved or declined")
    .option("--feedback <text>", "what to change (changes_requested needs it or a --comment); never counts as approval")
    .option(
      "--comment <item=text>",
      "with changes_requested: a comment on a record (A1=…) or a file line (notes.md:12=…) of the frozen revision (repeat, at most 50)",
      collect,
      [],
    )
    .option("--handoff-hash <hash>", "the exact version reviewed (required to approve)")
    .option("--reviewer <name>", "who reviews (with --key: the key's owner)")
    .option("--key <file>", "sign the receipt with this private key (default: TWINLOCK_KEY)")
    .action(async (run, id, opts) => sink(await (await import("./commands/review.js")).runReview(run, id, opts)));

  program
    .command("consent-pair-execution")
    .description("answer the consent question for the exact twin")
    .argument("<run>", "run file")
    .argument("<planner>", "planner ID")
    .option("--approve", "consent to run the exact twin on this version")
    .option("--decline", "refuse; the workflow closes with a record")
    .option("--handoff-hash <hash>", "the exact version consented to (required to approve)")
    .option("--user <name>", "who consents (with --key: the key's owner)")
    .option("--key <file>", "sign the receipt with this private key (default: TWINLOCK_KEY)")
    .option("--expires-in <duration>", "consent lifetime, e.g. 30m, 4h, 2d (default: the suite's policy)")
    .action(async (run, id, opts) => sink(await (await import("./commands/consent.js")).runConsent(run, id, opts)));

  program
    .command("approve-apply")
    .description("the separate apply approval of an APPLY_APPROVED run")
    .argument("<run>", "run file")
    .argument("<planner>", "planner ID")
    .option("--approver <name>", "who approves (with --key: the key's owner)")
    .option("--key <file>", "sign the receipt with this private key (default: TWINLOCK_KEY)")
    .action(async (run, id, opts) => sink(await (await import("./commands/run-admin.js")).runApproveApply(run, id, opts)));

  program
    .command("admit")
    .description("run every admission check for an executor; exit 3 on any failure")
    .argument("<run>", "run file")
    .argument("<executor>", "executor ID asking to act")
    .option("--planner <id>", "the planner whose plan it would execute")
    .option("--mode <mode>", "requested mode (default: the consented one)")
    .option("--environment <name>", "requested environment (default: the consented one)")
    .option("--actions <ids>", "requested +ACTION IDs (default: all consented)")
    .option("--dry", "report without recording or using the consent")
    .option("--checkout <dir>", "after admission, write a read-only copy of exactly the approved bytes to DIR")
    .option("--actor <name>", "who asks")
    .action(async (run, id, opts) => sink(await (await import("./commands/admit.js")).runAdmit(run, id, opts)));

  program
    .command("dry-run")
    .description("record a dry run of the consented plan (every check, DRAFT_ONLY, consent not used): dry_run_required asks for one")
    .argument("<run>", "run file")
    .argument("<executor>", "executor ID")
    .option("--planner <id>", "the planner whose plan it would execute")
    .option("--checkout <dir>", "write a read-only copy of exactly the approved bytes to DIR")
    .option("--actor <name>", "who asks")
    .action(async (run, id, opts) => sink(await (await import("./commands/admit.js")).runAdmit(run, id, opts, "dry-run")));

  program
    .command("dry-run-result")
    .description("record the result of the open dry run: passed lets an executor with dry_run_required be admitted to apply")
    .argument("<run>", "run file")
    .argument("<executor>", "executor ID")
    .requiredOption("--result <result>", "passed or failed")
    .requiredOption("--note <text>", "what the dry run showed")
    .option("--actor <name>", "who judged it (with --key: the key's owner)")
    .option("--key <file>", "a person's key with the apply right (default: TWINLOCK_KEY); required on signing suites")
    .action(async (run, id, opts) => sink(await (await import("./commands/admit.js")).runDryRunResult(run, id, opts)));

  program
    .command("pair-status")
    .description("the exact twin, the state and the one legal next step (stateless: ID; from a run: RUN ID)")
    .argument("<run-or-id>", "run file, or a prompt ID for the stateless form")
    .argument("[id]", "prompt ID, when a run file is given")
    .option("--suite <dir>", "suite folder (stateless form)")
    .option("--handoff-ready", "stateless: the handoff is ready and frozen")
    .option("--review-status <status>", "stateless: pending, changes_requested, approved or declined")
    .action(async (a, b, opts) => sink(await (await import("./commands/pair-status.js")).runPairStatus(a, b, opts)));

  program
    .command("stop")
    .description("record a hard !STOP on the run or one workflow")
    .argument("<run>", "run file")
    .requiredOption("--reason <slug>", "stop reason, e.g. missing-backup")
    .option("--workflow <id>", "limit the stop to one planner's workflow")
    .option("--note <text>", "why")
    .option("--actor <name>", "who stops")
    .action(async (run, opts) => sink(await (await import("./commands/run-admin.js")).runStop(run, opts)));

  program
    .command("resolve-stop")
    .description("lift hard !STOPs, each named by its number, with a note")
    .argument("<run>", "run file")
    .requiredOption("--reason <slug>", "stop reason")
    .option("--stop <n>", "the stop to lift, by its number (repeat for several; default: the one standing stop of the reason)", collect, [])
    .requiredOption("--note <text>", "how it was resolved")
    .option("--workflow <id>", "only that workflow's stop")
    .option("--actor <name>", "who resolves (with --key: the key's owner)")
    .option("--key <file>", "sign with a key holding the stop right (default: TWINLOCK_KEY); required on signing suites")
    .action(async (run, opts) => sink(await (await import("./commands/run-admin.js")).runResolveStop(run, opts)));

  program
    .command("close")
    .description(
      "close a workflow: verified (with the executed change: --git-range or --changed-files), failed or rolled_back after execution; abandoned or failed before",
    )
    .argument("<run>", "run file")
    .argument("<planner>", "planner ID")
    .requiredOption("--result <result>", "verified, failed, rolled_back or abandoned")
    .option("--residual <text>", "what is left undone (required before execution)")
    .option(
      "--changed-files <file>",
      "after execution: the changed files, one path per line relative to the git checkout's top folder (else the current folder)",
    )
    .option(
      "--git-range <A...B>",
      "after execution: the changed files are git diff --name-only A...B (since the merge base; A..B: between the two) (digests at B)",
    )
    .option("--criterion <id=result:cmd>", "a verification result, e.g. C1=passed:'npm test' (repeat per criterion)", collect, [])
    .option("--key <file>", "verified: a person's key with the verify right (default: TWINLOCK_KEY); required on signing suites")
    .option("--actor <name>", "who closes")
    .action(async (run, id, opts) => sink(await (await import("./commands/run-admin.js")).runClose(run, id, opts)));

  program
    .command("log")
    .description("print the run's event chain")
    .argument("<run>", "run file")
    .action(async (run, opts) => sink(await (await import("./commands/run-log.js")).runLog(run, opts)));

  program
    .command("verify-log")
    .description("verify the event chain and that the state equals its replay")
    .argument("<run>", "run file")
    .option("--exported", "RUN is run.json of `export --out DIR`: the chain and the replay only, no gate home's checkpoint")
    .action(async (run, opts) => sink(await (await import("./commands/run-log.js")).runVerifyLog(run, opts)));

  program
    .command("keygen")
    .description("make an Ed25519 reviewer key pair (private key 0600, never printed) and print the twinlock.yaml entry")
    .requiredOption("--name <name>", "the reviewer's name")
    .option("--out <dir>", "folder for NAME.key (default: current folder)")
    .option(
      "--rights <list>",
      "rights to list in the printed entry: review, consent, apply, freeze, stop, verify (default: review,consent,apply,stop,verify)",
    )
    .action(async (opts) => sink((await import("./commands/keygen.js")).runKeygen(opts)));

  program
    .command("verify-receipts")
    .description("check every receipt's signature, key, rights and revocation against the suite's reviewers")
    .argument("<run>", "run file, a run's ID or name in a PostgreSQL store, or with --exported an export's run.json")
    .option("--exported", "RUN is run.json of `export --out DIR`: judge it offline by --trust FILE")
    .option(
      "--trust <file>",
      "with --exported: a trust.json you trust (from an export you made, or kept where the agent cannot write), or a signed trust file from `trust export`",
    )
    .option("--pinner-key <file>", "with a signed trust file: the pinner's public key (NAME.pub)")
    .action(async (run, opts) => sink(await (await import("./commands/verify-receipts.js")).runVerifyReceipts(run, opts)));

  program
    .command("verify")
    .description(
      "for CI: the run's chain, every receipt against trusted reviewers, the admission on the approved hash, and each changed file inside the plan",
    )
    .argument("<run>", "run file")
    .option(
      "--suite <dir>",
      "the suite's folder in the checkout, e.g. prompts/suite: a team-store run's suite: handoff folders are read from it (default: the folder of a twinlock.yaml --trust, else the checkout root)",
    )
    .option(
      "--trust <file>",
      "reviewers file (twinlock.yaml-shaped), or a signed trust file from `trust export`, from the protected base branch (default: twinlock.yaml in --suite, else at the checkout root)",
    )
    .option("--pinner-key <file>", "with a signed trust file: the pinner's public key (NAME.pub), from the protected base branch")
    .option(
      "--changed-files <file>",
      "the changed files, one path per line relative to the git checkout's top folder (else the current folder)",
    )
    .option(
      "--git-range <A...B>",
      "the changed files are git diff --name-only A...B (since the merge base; A..B: between the two); the trust file is read from commit A",
    )
    .option("--change <ref>", "the change under test, OWNER/REPO#PR: the run must have been made for it (init-run --for-change)")
    .option("--summary <file>", "also write the report as Markdown (e.g. $GITHUB_STEP_SUMMARY)")
    .action(async (run, opts) => sink(await (await import("./commands/verify.js")).runVerify(run, opts)));

  program
    .command("attest")
    .description("write every review, consent, apply approval and admission as a DSSE-signed in-toto statement and a Sigstore bundle")
    .argument("<run>", "run file")
    .option("--out <dir>", "folder for the files (default: attestations/ beside the run file)")
    .option("--key <file>", "your Ed25519 key that signs the envelopes (default: TWINLOCK_KEY)")
    .action(async (run, opts) => sink(await (await import("./commands/attest.js")).runAttest(run, opts)));

  program
    .command("checkout")
    .description("write a read-only copy of exactly the approved bytes for an admitted executor")
    .argument("<run>", "run file")
    .argument("<executor>", "the admitted executor's ID")
    .argument("<dir>", "a new or empty folder")
    .action(async (run, id, dir, opts) => sink(await (await import("./commands/checkout.js")).runCheckout(run, id, dir, opts)));

  program
    .command("exec")
    .description("admit an executor, check out the approved bytes, bind the session for the hook, and run CMD in it")
    .argument("<run>", "run file")
    .argument("<executor>", "executor ID asking to act")
    .argument("<cmd...>", "the command to run, after --")
    .option("--checkout <dir>", "write the read-only checkout here and keep it (default: a temporary folder, removed when CMD ends)")
    .option("--planner <id>", "the planner whose plan it would execute")
    .option("--mode <mode>", "requested mode (default: the consented one)")
    .option("--environment <name>", "requested environment (default: the consented one)")
    .option("--actions <ids>", "requested +ACTION IDs (default: all consented)")
    .option("--actor <name>", "who asks")
    .option("--pass-env <names>", "more variables to hand the command, comma-separated (never TWINLOCK_KEY, TWINLOCK_STORE, NODE_OPTIONS)")
    .option("--hook-only", "run Codex or Gemini without exec's sandbox, held by the hook alone (which they pass when it fails)")
    .option("--sandbox", "run any command in exec's sandbox (Codex and Gemini always are): it may write only the admitted targets")
    .action(async (run, id, cmd, opts) => sink(await (await import("./commands/exec.js")).runExec(run, id, cmd, opts)));

  program
    .command("plan")
    .description(
      "bind a planner's session for the hook (read, read-only commands, its handoff folder, twinlock's MCP tools) and run CMD in it",
    )
    .argument("<run>", "run file (or a team store's run name)")
    .argument("<planner>", "the planner's ID")
    .argument("<cmd...>", "the command to run, after --")
    .option("--handoff <dir>", "the planner's handoff folder (required until its first freeze; then the frozen one)")
    .option("--pass-env <names>", "more variables to hand the command, comma-separated (never TWINLOCK_KEY, TWINLOCK_STORE, NODE_OPTIONS)")
    .option("--hook-only", "run Codex or Gemini without the sandbox, held by the hook alone (which they pass when it fails)")
    .option("--sandbox", "run any command in the sandbox (Codex and Gemini always are): it may write only the handoff folder")
    .action(async (run, id, cmd, opts) => sink(await (await import("./commands/plan.js")).runPlan(run, id, cmd, opts)));

  program
    .command("hook")
    .description("answer an agent tool's pre-tool-use hook (claude, codex, gemini or cursor); stdin is the tool's JSON")
    .argument("<agent>", "claude, codex, gemini or cursor")
    .allowUnknownOption()
    .action(async (agent) => {
      const { runHook } = await import("../hook/run-hook.js");
      runHook([agent, ...process.argv.slice(process.argv.indexOf(agent) + 1)]);
      await new Promise(() => {});
    });

  const hooks = program.command("hooks").description("install or remove the twinlock hook in an agent tool's config");
  for (const what of ["install", "uninstall"] as const)
    hooks
      .command(what)
      .description(
        what === "install"
          ? "merge the twinlock hook into the agent tool's config (keeps everything else)"
          : "remove only twinlock's own entries from the agent tool's config",
      )
      .requiredOption("--agent <name>", "claude, codex, gemini or cursor")
      .option("--project", "the project's config in the current folder (default)")
      .option("--user", "the user's config in the home folder")
      .option("--dry-run", "print the diff and write nothing")
      .option("--trust", "Codex only: show the hook's command and hash, then trust it in Codex's config.toml as its /hooks review does")
      .action(async (opts) => {
        const m = await import("./commands/hooks.js");
        sink(await (what === "install" ? m.runHooksInstall(opts) : m.runHooksUninstall(opts)));
      });
  hooks
    .command("status")
    .description(
      "per tool and scope: installed, trusted (Codex), the tool's version, settings that defeat the hook; exit 1 if any would let a call through",
    )
    .option("--agent <name>", "only this tool (claude, codex, gemini or cursor); then not installed is a problem too")
    .action(async (opts) => sink(await (await import("./commands/hooks-status.js")).runHooksStatus(opts)));

  const home = program.command("home").description("the gate home itself: its frozen files and their quota");
  home
    .command("gc")
    .description("delete the frozen files no run of the gate home uses; print what remains against the quota")
    .action(async (opts) => sink(await (await import("./commands/home.js")).runHomeGc(opts)));

  const trust = program.command("trust").description("the gate home's pinned suites: what runs are judged by");
  trust
    .command("pin")
    .description("pin a suite: its real path, suite_id, the sha256 of its twinlock.yaml and its pairs")
    .option("--suite <dir>", "suite folder")
    .option("--allow-unsigned", "accept a suite that does not require signed receipts (admission then says UNSIGNED)")
    .option("--key <file>", "a pinner's private key (default: TWINLOCK_KEY); the first pin of a new home makes this key its pinner")
    .action(async (opts) => sink(await (await import("./commands/trust.js")).runTrustPin(opts)));
  trust
    .command("list")
    .description("list the pinned suites")
    .action(async (opts) => sink(await (await import("./commands/trust.js")).runTrustList(opts)));
  trust
    .command("unpin")
    .description("remove a suite's pin; its runs are refused until it is pinned again")
    .argument("<suite-id>", "the suite_id to unpin")
    .option("--key <file>", "a pinner's private key (default: TWINLOCK_KEY)")
    .action(async (id, opts) => sink(await (await import("./commands/trust.js")).runTrustUnpin(id, opts)));
  trust
    .command("add-pinner")
    .description("let another person's key pin, re-pin and unpin suites in this gate home")
    .argument("<public-key>", "the ed25519:… line of their NAME.pub")
    .option("--key <file>", "an existing pinner's private key (default: TWINLOCK_KEY)")
    .action(async (pub, opts) => sink(await (await import("./commands/trust.js")).runTrustAddPinner(pub, opts)));
  trust
    .command("gate-key")
    .description("print this gate's public signing key (made once), to pin in twinlock.yaml's gate_keys: where its evidence is checked")
    .action(async (opts) => sink(await (await import("./commands/trust.js")).runTrustGateKey(opts)));
  trust
    .command("export")
    .description(
      "write what CI trusts (reviewer keys, enrolled passkeys with their rights, revocations, gate keys) to one file signed by a pinner",
    )
    .option("--out <file>", "the file to write, e.g. twinlock-trust.json (commit it on the protected branch)")
    .option("--key <file>", "a pinner's private key (default: TWINLOCK_KEY)")
    .option("--suite-id <id>", "the pinned suite to export (needed when the gate pins more than one)")
    .option("--ci-identity <name>", "the reviewer (a key with rights: [verify] only) CI closes runs verified with, after verify passes")
    .action(async (opts) => sink(await (await import("./commands/trust.js")).runTrustExport(opts)));
  trust
    .command("add-gate-key")
    .description(
      "trust another gate's signatures here: import and attest take runs it signed (the ed25519:… line its trust gate-key printed)",
    )
    .argument("<public-key>", "the gate's public key line")
    .option("--name <name>", "what to call that gate in messages (default: gate)")
    .option("--key <file>", "a pinner's private key (default: TWINLOCK_KEY)")
    .action(async (pub, opts) => sink(await (await import("./commands/trust.js")).runTrustAddGateKey(pub, opts)));

  program
    .command("serve")
    .description("run the gate server: JSON API, review pages, passkey sign-in, agent tokens (the gate home's one writer)")
    .option("--listen <host:port>", "where to listen (default 127.0.0.1:7420; other addresses need TLS or --insecure-http)")
    .option("--tls-cert <file>", "PEM certificate, with --tls-key")
    .option("--tls-key <file>", "PEM private key, with --tls-cert")
    .option("--insecure-http", "allow plain HTTP on a non-loopback address (every page says so)")
    .option("--origin <url>", "the origin people open, when not this address (behind a proxy); passkeys bind to its host")
    .option("--quiet", "no access log on stderr")
    .option(
      "--handoff-root <dir>",
      "with a PostgreSQL store: the folder agents' handoff folders are in (their first freeze must be inside it)",
    )
    .option(
      "--trusted-proxy <address>",
      "the IP address of a reverse proxy in front of the server whose X-Forwarded-For names the client (repeatable); from anyone else that header is ignored",
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option("--github-app <id>", "post a GitHub check run on each bound change's head commit as its run moves (tells, never decides)")
    .option("--github-app-key <file>", "with --github-app: the app's private key (.pem)")
    .option("--github-installation <id>", "with --github-app: the installation whose token posts the checks")
    .option(
      "--github-repo <owner/repo>",
      "with --github-app: a repository whose runs (init-run --for-change) get a check (repeatable)",
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option(
      "--github-api <url>",
      "with --github-app: the REST API base (default https://api.github.com; GitHub Enterprise: https://HOST/api/v3)",
    )
    .action(async (opts) => sink(await (await import("./commands/serve.js")).runServe(opts)));

  program
    .command("mcp")
    .description("the agent's MCP server over stdio for one run: status, readiness, freeze, review request, admission check, result")
    .requiredOption("--run <run>", "run file")
    .option("--planner <id>", "only this pair")
    .option("--executor <id>", "as this executor of the --planner pair: status, plan, admission check and its result; no freeze")
    .option("--handoff <dir>", "freeze only this folder (plan's relay: the planner's bound handoff folder)")
    .option("--server <url>", "the gate server's origin, for review page links")
    .option("--actor <name>", "the agent's name in the log (default mcp-agent)")
    .option("--key <file>", "the planner's key with the freeze right, to sign freezes on signing suites (default: TWINLOCK_KEY)")
    .action(async (opts) => sink(await (await import("./commands/mcp.js")).runMcp(opts)));

  program
    .command("verify-attestation")
    .description(
      "check attest's envelopes or Sigstore bundles offline: trusted attester, a receipt the run recorded, a trusted reviewer's signature and the gate's (--trust FILE)",
    )
    .argument("<files...>", ".intoto.json or .sigstore.json files from twinlock attest")
    .requiredOption("--run <run>", "the run file the receipts belong to")
    .option("--attester <pub>", "a trusted attester's NAME.pub (repeatable)", collect, [])
    .option(
      "--trust <file>",
      "the reviewers file (twinlock.yaml), or a signed trust file from `trust export`, whose keys the receipts must be signed by",
    )
    .option("--pinner-key <file>", "with a signed trust file: the pinner's public key (NAME.pub)")
    .action(async (files, opts) => sink((await import("./commands/verify-attestation.js")).runVerifyAttestation(files, opts)));

  program
    .command("export")
    .description("write a run as a verifiable run file (stdout, or --out DIR with its frozen files), from any store")
    .argument("<run>", "run file, or a run's ID or name in a PostgreSQL store")
    .option("--out <dir>", "a new or empty folder for run.json and the frozen files")
    .action(async (run, opts) => sink(await (await import("./commands/export.js")).runExport(run, opts)));

  program
    .command("import")
    .description("load an exported run (export --out DIR) into a store, verified first: its chain, and every frozen file by sha256")
    .argument("<dir>", "the folder export --out wrote (run.json and frozen/)")
    .option("--as <name>", "the name to give the run in a PostgreSQL store, or the run file to restore in the gate home")
    .option("--accept-unsigned", "import a run of a suite pinned with --allow-unsigned (its receipts prove nothing about who decided)")
    .action(async (dir, opts) => sink(await (await import("./commands/import.js")).runImport(dir, opts)));

  const db = program.command("db").description("a team's PostgreSQL store");
  db.command("migrate")
    .description("apply this twinlock's schema migrations to the database (refuses a newer schema)")
    .action(async (opts) => sink(await (await import("./commands/db.js")).runDbMigrate(opts)));

  const token = program
    .command("token")
    .description("agents' bearer tokens for the gate server: status, freeze, present, admission check, result");
  token
    .command("create")
    .description("make a token for one agent on one run, or with --ci a read-only one for CI's exports (printed once, stored hashed)")
    .option("--agent <name>", "the agent's name, for the log (with --ci: default ci)")
    .option("--run <run>", "run file (with --ci: omit it for every run)")
    .option(
      "--ci",
      "a token for CI: the export scope alone (GET /api/runs/ID/export), for every run unless --run, up to 366 days (default 90)",
    )
    .option("--planner <id>", "only this pair")
    .option("--expires-in <days>", "lifetime in days (default 1, at most 30)")
    .option("--scopes <list>", "a subset of status,freeze,present,admission_check,result (default all five)")
    .option(
      "--freeze-key <file>",
      "a planner key with the freeze right: the gate home keeps it and signs this token's freezes (signing suites)",
    )
    .action(async (opts) => sink(await (await import("./commands/token.js")).runTokenCreate(opts)));
  token
    .command("revoke")
    .description("revoke a token for good")
    .argument("<id>", "tok_… from token create or token list")
    .action(async (id, opts) => sink(await (await import("./commands/token.js")).runTokenRevoke(id, opts)));
  token
    .command("list")
    .description("list the tokens (never their secrets)")
    .action(async (opts) => sink(await (await import("./commands/token.js")).runTokenList(opts)));

  const notify = program
    .command("notify")
    .description("webhooks told of run events (signed, Standard Webhooks); notifications only, never a decision");
  notify
    .command("add")
    .description("add a webhook; its signing secret is printed once and kept in the gate home or database")
    .argument("<url>", "the receiver's http(s) URL")
    .option("--events <list>", "comma-separated notifications, or all (default all)")
    .option("--format <format>", "json (Standard Webhooks), slack or teams (default json)")
    .option("--secret-file <file>", "sign with the secret in FILE (whsec_…) instead of a new one")
    .action(async (url, opts) => sink(await (await import("./commands/notify.js")).runNotifyAdd(url, opts)));
  notify
    .command("list")
    .description("list the webhooks (URLs redacted, never a secret) and what waits for each")
    .action(async (opts) => sink(await (await import("./commands/notify.js")).runNotifyList(opts)));
  notify
    .command("remove")
    .description("remove a webhook and the deliveries waiting for it")
    .argument("<id>", "wh_… from notify add or notify list")
    .action(async (id, opts) => sink(await (await import("./commands/notify.js")).runNotifyRemove(id, opts)));

  const reviewer = program.command("reviewer").description("people who decide in the browser with a passkey");
  reviewer
    .command("invite")
    .description("print a one-time enrolment link (15 minutes, single use)")
    .argument("<name>", "the reviewer's name, as receipts will show it")
    .option("--rights <list>", "review, consent, apply, stop, verify (default review,consent,apply,stop)")
    .option("--origin <url>", "the server's origin (default http://localhost:7420)")
    .action(async (name, opts) => sink(await (await import("./commands/reviewer.js")).runReviewerInvite(name, opts)));
  reviewer
    .command("list")
    .description("list enrolled reviewers")
    .action(async (opts) => sink(await (await import("./commands/reviewer.js")).runReviewerList(opts)));
  reviewer
    .command("revoke")
    .description("revoke a reviewer: their passkeys sign nothing more")
    .argument("<name>", "the reviewer's name")
    .action(async (name, opts) => sink(await (await import("./commands/reviewer.js")).runReviewerRevoke(name, opts)));

  program
    .command("demo")
    .description("walk the whole gate on the bundled example suite in a temporary folder")
    .option("--keep", "keep the temporary folder and print its path")
    .option("--processes", "run each step as a twinlock process of its own, as typed in a shell")
    .option("--serve", "set the example up for the browser (a frozen revision, an enrolment link, an agent token) and run the gate server")
    .option("--listen <host:port>", "with --serve: where the server listens (default 127.0.0.1:7420)")
    .option("--dir <dir>", "with --serve: the folder to set up in (default: a new temporary one, kept)")
    .action(async (opts) =>
      sink(
        opts.serve
          ? await (await import("./commands/demo-serve.js")).runDemoServe(opts)
          : await (await import("./commands/demo.js")).runDemo(opts),
      ),
    );
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/**
 * `program` as registerCommands sees it when only the command `name` is
 * wanted: `command(spec)` builds that command on the real program and, for
 * any other, returns a stand-in whose every method returns itself.
 */
function oneCommandOf(program: Command, name: string): Command {
  const passedOver: Command = new Proxy({} as Command, { get: () => () => passedOver });
  return { command: (spec: string) => (spec.split(" ")[0] === name ? program.command(spec) : passedOver) } as unknown as Command;
}
