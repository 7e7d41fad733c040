#!/usr/bin/env bash
# Installs the real agent CLIs that test/real-agents drives (Claude Code, Codex CLI,
# Gemini CLI), pinned, into .agent-clis/ (or $TWINLOCK_AGENT_CLIS): outside the project's
# node_modules and package.json, so the default `npm ci` stays light. Idempotent: a folder
# that already holds the pinned versions, with their native binaries in place, is left as is.
#
# Install scripts: npm 11 reads `allowScripts` in the prefix's package.json (written below).
# An unreviewed script still RUNS with a notice (npm 11.19 here built node-pty with node-gyp),
# so we pass --strict-allow-scripts: a script none of the entries below covers fails the install.
# - @anthropic-ai/claude-code: ALLOWED. Its postinstall (install.cjs) links the native
#   binary of @anthropic-ai/claude-code-<platform> over bin/claude.exe, a 500-byte stub
#   until then; without it `claude` does not run. It downloads nothing.
# - @openai/codex: has no install script; its native binary comes in the per-platform
#   optional package (@openai/codex-linux-x64, an alias of @openai/codex@VER-linux-x64).
# - @google/gemini-cli: has none; it is one bundled JS file. Its optional dependencies
#   @github/keytar (prebuild-install fetches a binary from outside the registry, else
#   compiles) and node-pty (node-gyp rebuild) are DENIED: Gemini runs without them
#   (keytar only stores OAuth tokens; it prefers @lydell/node-pty, which ships prebuilt
#   per-platform packages with no script, and falls back to child_process).
#
# Claude Code 2.1.328's `engines` says node >=22 (npm prints EBADENGINE, a warning; 2.1.200
# and later say so too, 2.1.100 said >=18): on Node 20 only its install.cjs runs under
# node, and does; the CLI itself is the native binary. Codex 0.169.0 says node >=16, Gemini
# CLI 0.61.0 node >=20 (it runs under node).
set -euo pipefail

CLAUDE_VERSION=2.1.328
CODEX_VERSION=0.169.0
GEMINI_VERSION=0.61.0

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="${TWINLOCK_AGENT_CLIS:-$root/.agent-clis}"

installed_version() { # PACKAGE → its installed version, or nothing
  node -e 'try{process.stdout.write(require(process.argv[1]).version)}catch{}' "$dest/node_modules/$1/package.json"
}

native_in_place() { # the three CLIs answer --version with the pinned versions
  [ "$("$dest/node_modules/.bin/claude" --version 2>/dev/null | cut -d' ' -f1)" = "$CLAUDE_VERSION" ] &&
    [ "$("$dest/node_modules/.bin/codex" --version 2>/dev/null)" = "codex-cli $CODEX_VERSION" ] &&
    [ "$(installed_version @google/gemini-cli)" = "$GEMINI_VERSION" ]
}

if [ -d "$dest/node_modules" ] && native_in_place; then
  echo "agent CLIs already installed in $dest: claude-code $CLAUDE_VERSION, codex $CODEX_VERSION, gemini-cli $GEMINI_VERSION"
  exit 0
fi

mkdir -p "$dest"
cat >"$dest/package.json" <<JSON
{
  "name": "twinlock-agent-clis",
  "private": true,
  "description": "The real agent CLIs test/real-agents drives; written by scripts/install-agent-clis.sh.",
  "allowScripts": {
    "@anthropic-ai/claude-code@$CLAUDE_VERSION": true,
    "@github/keytar": false,
    "node-pty": false
  }
}
JSON

npm install --prefix "$dest" --no-save --no-audit --no-fund --strict-allow-scripts \
  "@anthropic-ai/claude-code@$CLAUDE_VERSION" "@openai/codex@$CODEX_VERSION" "@google/gemini-cli@$GEMINI_VERSION"

if ! native_in_place; then
  echo "install-agent-clis: the CLIs in $dest do not answer with the pinned versions (claude $CLAUDE_VERSION, codex $CODEX_VERSION, gemini $GEMINI_VERSION); remove $dest and run this again" >&2
  exit 1
fi
echo "agent CLIs installed in $dest: claude-code $CLAUDE_VERSION, codex $CODEX_VERSION, gemini-cli $GEMINI_VERSION"
