import { describe, expect, it } from "vitest";
import { scenarioTable } from "./scenario-table.js";

describe("scenarioTable", () => {
  const table = scenarioTable({
    versions: { "Codex CLI": "0.169.0" },
    generatedAt: "2026-12-02T00:00:00.000Z",
    rows: [
      { tool: "Codex CLI 0.169.0", scenario: "no session: write", expected: "not done", observed: "not done | a\nb", holds: true },
      { tool: "Codex CLI 0.169.0", scenario: "hook killed", expected: "not done", observed: "done", holds: false, openToday: "finding 2" },
      { tool: "Codex CLI 0.169.0", scenario: "exec: write", expected: "done", observed: "not done", holds: false },
    ],
    statuses: [{ tool: "Codex CLI 0.169.0", setup: "hooks install --agent codex --project", exitCode: 1, output: "codex: NOT TRUSTED\n" }],
  });

  it("writes one row a scenario, its pipes escaped and its lines joined, saying which hold, which are open today and which fail", () => {
    expect(table).toContain("| Codex CLI 0.169.0 | no session: write | not done | not done \\| a b | yes |");
    expect(table).toContain("| no, open today: finding 2 |");
    expect(table).toContain("| **no (failing)** |");
    expect(table).toContain("3 scenarios: 1 hold, 1 open today (the tool's own behaviour, marked it.fails), 1 failing.");
  });

  it("quotes what hooks status printed for each tool, with its exit code", () => {
    expect(table).toContain("### Codex CLI 0.169.0: hooks install --agent codex --project (exit 1)\n\n```\ncodex: NOT TRUSTED\n```");
  });
});
