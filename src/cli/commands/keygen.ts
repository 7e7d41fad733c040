import { closeSync, constants, fsyncSync, lstatSync, mkdirSync, openSync, writeSync } from "node:fs";
import path from "node:path";
import { RefusalError, UsageError } from "../../errors/errors.js";
import { parseChoice, parseText } from "../../input/parse-input.js";
import { fsyncDir } from "../../store/atomic-write.js";
import { RIGHTS } from "../../suite/suite-config.js";
import { generateReviewerKey } from "../../trust/keys.js";
import type { CommandResult, CommonOptions } from "../command-result.js";

/**
 * `twinlock keygen --name NAME [--out DIR]`: an Ed25519 key pair. The
 * private key is written with mode 0600 and never printed; the public key
 * line is printed to paste into twinlock.yaml.
 */
export function runKeygen(o: CommonOptions & { name: string; out?: string; rights?: string }): CommandResult {
  const name = parseText(o.name, "--name", 200).trim();
  // Plain ASCII only: a reviewer's name is shown in every consent question, where a look-alike letter could pass for another reviewer.
  if (!/^[A-Za-z0-9][A-Za-z0-9._ -]*$/.test(name))
    throw new UsageError(
      `--name ${JSON.stringify(name)} must start with an ASCII letter or digit and hold only ASCII letters, digits, spaces, . _ or - (look-alike letters could pass for another reviewer); spell it that way, e.g. --name "Ana Maria"`,
    );
  const rights = (o.rights ?? "review,consent,apply,stop,verify").split(",").map((r) => r.trim());
  for (const r of rights) parseChoice(r, RIGHTS, "--rights");
  const dir = path.resolve(o.out ?? ".");
  const file = path.join(dir, `${name.replace(/[^A-Za-z0-9._-]/g, "-")}.key`);
  const pub = file.replace(/\.key$/, ".pub");
  // lstat, not exists: a dangling link is "something there" too, and is never written through.
  if (present(file) || present(pub))
    throw new RefusalError(`${file} or ${path.basename(pub)} already exists; keys are never overwritten — choose another --name or --out`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const { privatePem, publicKey } = generateReviewerKey();
  writeNew(file, privatePem, 0o600);
  // The public key is not secret: keep it beside the private key so it can be listed again later.
  writeNew(pub, `${publicKey}\n`, 0o644);
  fsyncDir(dir);
  const snippet = `reviewers:\n  - name: ${yamlString(name)}\n    public_key: ${publicKey}\n    rights: [${rights.join(", ")}]`;
  const text = [
    `wrote private key ${file} (mode 0600); keep it where the agent cannot read it`,
    `wrote public key ${file.replace(/\.key$/, ".pub")}`,
    "add this reviewer to the suite's twinlock.yaml (the entry goes in its one `reviewers:` list, beside any others):",
    "",
    snippet,
    "",
    `sign decisions with --key ${file} (or TWINLOCK_KEY=${file})`,
  ].join("\n");
  return { exitCode: 0, text, json: { ok: true, name, key_file: file, public_key: publicKey, rights } };
}

function present(file: string): boolean {
  try {
    lstatSync(file);
    return true;
  } catch {
    return false;
  }
}

/** Create a new file, never following a link or replacing anything already there. */
function writeNew(file: string, text: string, mode: number): void {
  let fd: number;
  try {
    fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, mode);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST" || code === "ELOOP")
      throw new RefusalError(`${file} already exists; keys are never overwritten — choose another --name or --out`);
    throw new UsageError(`cannot write ${file} (${code}); give a folder you can write with --out`, { cause: error });
  }
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * `name` as a YAML value that every YAML reader takes as that string: plain
 * when it starts with a letter and is no word YAML 1.1 or 1.2 reads as a
 * boolean or null (`alice`, `bad name`), else double-quoted. Unquoted,
 * `true`, `null`, `1.0`, `123` or (to YAML 1.1 tools) `on`, `no`, `0777`
 * would read as a boolean, null or number, and twinlock.yaml would be invalid
 * or read differently by another tool.
 */
function yamlString(name: string): string {
  return /^[A-Za-z][A-Za-z0-9._ -]*$/.test(name) && !YAML_WORDS.test(name) ? name : JSON.stringify(name);
}

/** The words a YAML 1.1 or 1.2 reader takes as a boolean or null. */
const YAML_WORDS = /^(?:y|yes|n|no|on|off|true|false|null)$/i;
