import type { PresentedFile } from "../gate/present-plan.js";
import { escapeHtml } from "./escape-html.js";
import { renderUnifiedDiff } from "./render-unified-diff.js";

/**
 * Every hashed file of a revision (path, size, sha256, what changed since
 * `previous`), its diff by line when it changed, and all of its text in a
 * `<pre>`; a file that is not UTF-8 text is said to be binary and shown
 * decoded (its lossy view), since the executor gets every byte. Files gone
 * since the previous revision are listed last.
 */
export function renderHashedFiles(files: readonly PresentedFile[], removed: readonly string[], previous: number | null): string {
  const e = escapeHtml;
  const out = files.map((f, i) => {
    const change =
      f.change === "unchanged" || previous === null
        ? ""
        : ` <span class="change-kind change-${e(f.change)}">${e(f.change)} since revision ${previous}</span>`;
    const head = `<h3 id="file-${i}"><code>${e(f.path)}</code>${change}</h3>
<dl class="file-facts"><dt>size</dt><dd>${f.size} bytes</dd><dt>sha256</dt><dd><code class="hash">${e(f.sha256)}</code></dd></dl>`;
    const diff = f.diff === null ? "" : `\n<h4>Changes since revision ${previous ?? "before"}</h4>\n${renderUnifiedDiff(f.diff)}`;
    const body =
      f.text === null
        ? `\n<p><strong>Binary, ${f.size} bytes</strong> (not UTF-8 text, or it holds NUL bytes): shown decoded, each byte that is not text as �. The executor gets the file as it is.</p>\n<pre class="file-text" tabindex="0">${e(f.lossy ?? "")}</pre>`
        : `\n<details><summary>Text of <code>${e(f.path)}</code></summary>\n<pre class="file-text" tabindex="0">${e(f.text)}</pre>\n</details>`;
    return `<article class="file">${head}${diff}${body}</article>`;
  });
  const gone =
    removed.length === 0
      ? ""
      : `\n<p>Removed since revision ${previous ?? "before"}:</p>\n<ul>${removed.map((p) => `<li><code>${e(p)}</code></li>`).join("")}</ul>`;
  return `${out.join("\n")}${gone}`;
}
