import { describeDiffNotShown, describeNotWhole } from "../gate/present-files.js";
import type { PresentedFile } from "../gate/present-plan.js";
import { escapeHtml } from "./escape-html.js";
import { renderUnifiedDiff } from "./render-unified-diff.js";

/**
 * Every hashed file of a revision (path, size, sha256, what changed since
 * `previous`), its diff by line when it changed, and all of its text in a
 * `<pre>`; a file that is not UTF-8 text is said to be binary and shown
 * decoded (its lossy view), since the executor gets every byte. A file
 * over the budget of what is shown is said to be a part (or not shown) before
 * any of its bytes, with where all of it is; a diff too large to make is said
 * to be, with each revision's size and sha256. Files gone since the previous
 * revision are listed last.
 */
export function renderHashedFiles(
  files: readonly PresentedFile[],
  removed: readonly string[],
  previous: number | null,
  commentForm?: string,
): string {
  const e = escapeHtml;
  const out = files.map((f, i) => {
    const change =
      f.change === "unchanged" || previous === null
        ? ""
        : ` <span class="change-kind change-${e(f.change)}">${e(f.change)} since revision ${previous}</span>`;
    const head = `<h3 id="file-${i}"><code>${e(f.path)}</code>${change}</h3>
<dl class="file-facts"><dt>size</dt><dd>${f.size} bytes</dd><dt>sha256</dt><dd><code class="hash">${e(f.sha256)}</code></dd></dl>`;
    const notWhole = describeNotWhole(f);
    const part = notWhole === null ? "" : `\n<p class="banner banner-partial" role="note">${e(notWhole)}</p>`;
    const tooLarge = previous === null ? null : describeDiffNotShown(f, previous + 1);
    const diff =
      f.diff !== null
        ? `\n<h4>Changes since revision ${previous ?? "before"}</h4>\n${renderUnifiedDiff(f.diff)}`
        : tooLarge !== null
          ? `\n<h4>Changes since revision ${previous}</h4>\n<p class="diff-too-large">${e(tooLarge)}</p>`
          : "";
    const body =
      f.shown === "none"
        ? ""
        : f.text === null
          ? `\n<p><strong>Binary, ${f.size} bytes</strong> (not UTF-8 text, or it holds NUL bytes): shown decoded, each byte that is not text as �. The executor gets the file as it is.</p>\n<pre class="file-text" tabindex="0">${e(f.lossy ?? "")}</pre>`
          : `\n<details><summary>Text of <code>${e(f.path)}</code></summary>\n<pre class="file-text" tabindex="0">${e(f.text)}</pre>\n</details>`;
    // A comment on a line of the file: the line and the words belong to the request-changes form, posted as `comment-file:PATH`.
    const comment =
      commentForm === undefined
        ? ""
        : `\n<details class="comment-control"><summary>Comment on a line of <code>${e(f.path)}</code></summary>
<label for="comment-line-${i}">Line</label>
<input id="comment-line-${i}" name="comment-line:${e(f.path)}" form="${e(commentForm)}" type="number" min="1" step="1" inputmode="numeric">
<label for="comment-file-${i}">Your comment on that line, sent with “request changes”</label>
<textarea id="comment-file-${i}" name="comment-file:${e(f.path)}" form="${e(commentForm)}" rows="3" maxlength="4096"></textarea>
</details>`;
    return `<article class="file">${head}${part}${diff}${body}${comment}</article>`;
  });
  const gone =
    removed.length === 0
      ? ""
      : `\n<p>Removed since revision ${previous ?? "before"}:</p>\n<ul>${removed.map((p) => `<li><code>${e(p)}</code></li>`).join("")}</ul>`;
  return `${out.join("\n")}${gone}`;
}
