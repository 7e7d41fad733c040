import { cpSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { REPO_ROOT } from "./ensure-built.js";

/** This repository's package.json. */
const PKG = JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as {
  files: string[];
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
};

/** The version twinlock pins for one of its optional peers (an agent SDK). */
export function pinnedPeer(name: string): string {
  const v = PKG.peerDependencies[name];
  if (v === undefined) throw new Error(`${name} is no peer dependency of twinlock`);
  return v;
}

/** Links `name` from this repository's node_modules into `project`'s. */
export function linkPackage(project: string, name: string): void {
  const at = path.join(project, "node_modules", name);
  mkdirSync(path.dirname(at), { recursive: true });
  symlinkSync(path.join(REPO_ROOT, "node_modules", name), at, "dir");
}

/**
 * A fresh project (its folder, under the OS's temp folder: the caller
 * removes it) whose node_modules holds twinlock as its package ships
 * (package.json and its `files`, copied, so Node resolves the adapters'
 * imports from the project and never finds this repository's SDKs), its
 * dependencies as links into this repository's node_modules, and no agent
 * SDK but the ones `sdks` names. Run `ensureBuilt` first: it copies dist/.
 */
export function projectWithoutSdks(sdks: string[] = []): string {
  const project = mkdtempSync(path.join(os.tmpdir(), "twinlock-no-sdk-"));
  writeFileSync(path.join(project, "package.json"), `${JSON.stringify({ name: "app", private: true, type: "module" })}\n`);
  const twinlock = path.join(project, "node_modules", "twinlock");
  mkdirSync(twinlock, { recursive: true });
  cpSync(path.join(REPO_ROOT, "package.json"), path.join(twinlock, "package.json"));
  for (const f of PKG.files) cpSync(path.join(REPO_ROOT, f), path.join(twinlock, f), { recursive: true });
  for (const name of [...Object.keys(PKG.dependencies), ...sdks]) linkPackage(project, name);
  return project;
}
