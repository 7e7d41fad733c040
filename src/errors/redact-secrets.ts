/**
 * The one redaction every message passes before it leaves a twinlock
 * process (an HTTP or MCP answer, the server's log, the CLI's error line):
 * store URLs lose their user-info and query values, key text and agent
 * token secrets are cut out, `password=` style pairs lose their value, and
 * the gate home's own folder is named, never spelled out, where the caller
 * says so. Every pattern here is linear: messages quote agent input.
 */

/** Where a folder is named instead of shown: its path and the words that stand for it. */
export interface RedactedFolder {
  path: string;
  name: string;
}

/** What `redactSecrets` cuts besides the secrets every message loses: folders (the gate home) a reader must not learn. */
export interface RedactOptions {
  folders?: readonly RedactedFolder[];
}

/** Query parameters of a store URL whose values are shown: none of them can carry a secret. */
const SHOWN_QUERY_KEYS = new Set(["sslmode", "application_name", "connect_timeout", "encoding", "db", "port"]);

/**
 * A store URL as messages show it: scheme, host, port and database only.
 * The user-info (user and password) and every query value but a few
 * harmless ones are replaced, whatever form `pg` would read it in
 * (postgres:// or postgresql://, user:pass@, `?password=`, `?sslpassword=`,
 * percent-encoded names or values, socket hosts); text that is not a URL
 * at all is not shown.
 */
export function redactStoreUrl(url: string): string {
  // pg's socket form: "/var/run/postgresql dbname" — the folder is shown, anything after it is not.
  if (url.startsWith("/")) {
    const space = url.indexOf(" ");
    return space < 0 ? url : `${url.slice(0, space)} …`;
  }
  if (!/^[A-Za-z][A-Za-z0-9+.-]{0,30}:\/\//.test(url)) return "(a connection string, not shown)";
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return `${url.slice(0, url.indexOf("://"))}://… (not shown)`;
  }
  // A user name alone is no secret (and a message's own USER@HOST stays readable); a password, or a name that
  // percent-encodes what could be one, loses the whole user-info.
  const userinfo = u.password !== "" || u.username.includes("%") ? "***@" : u.username !== "" ? `${u.username}@` : "";
  let query = "";
  const shown: string[] = [];
  for (const [k, v] of u.searchParams) shown.push(SHOWN_QUERY_KEYS.has(k.toLowerCase()) ? `${k}=${v}` : `${k}=***`);
  if (shown.length > 0) query = `?${shown.map(encodeSafe).join("&")}`;
  return redactSecrets(`${u.protocol}//${userinfo}${u.host}${u.pathname === "/" ? "" : u.pathname}${query}`);
}

function encodeSafe(pair: string): string {
  return pair.replace(/[\s&#]/g, (c) => encodeURIComponent(c));
}

/**
 * `text` with every secret it may carry cut out: URL user-info, URL query
 * values (but for harmless keys), `password=…`-style pairs, PEM key blocks,
 * agent token secrets, and the folders the options name. Idempotent.
 */
export function redactSecrets(text: string, options: RedactOptions = {}): string {
  let out = cutKeyBlocks(text);
  // URL user-info holding a password (a ":") or percent-encoding: everything between "scheme://" and the "@".
  out = out.replace(/([A-Za-z][A-Za-z0-9+.-]{0,30}:\/\/)([^\s@]{0,1024})@/g, (m, scheme: string, info: string) =>
    info.includes(":") || info.includes("%") ? `${scheme}***@` : m,
  );
  // URL query values (`scheme://…?` and `socket:/…?`): each key=value after a "?" within one unbroken run of text.
  out = out.replace(
    /([A-Za-z][A-Za-z0-9+.-]{0,30}:[^\s?]{0,1024})\?([^\s]{0,4096})/g,
    (_m, head: string, query: string) => `${head}?${redactQuery(query)}`,
  );
  // key=value pairs in free text (libpq's keyword form, PGPASSWORD=…, sslpassword=…), percent-encoded names too.
  out = out.replace(
    /(pass|pwd|secret|token|sslkey)([A-Za-z0-9_%-]{0,40})(\s{0,4}=\s{0,4})('[^'\n]{0,4096}'|"[^"\n]{0,4096}"|[^\s&;#,'")]{1,4096})/gi,
    (m, a: string, b: string, sep: string, value: string) => (value === "***" ? m : `${a}${b}${sep}***`),
  );
  // Agent token secrets: the ID may be shown, the secret never.
  out = out.replace(/\btl_([0-9a-f]{16})_[A-Za-z0-9_-]{43}/g, "tl_$1_***");
  for (const f of options.folders ?? []) {
    if (f.path.length < 2) continue;
    out = out.split(`gate home ${f.path}`).join(f.name).split(f.path).join(f.name);
  }
  return out;
}

/** A URL query with every value redacted but those of keys that cannot hold a secret (names decoded first). */
function redactQuery(query: string): string {
  const hash = query.indexOf("#");
  const body = hash < 0 ? query : query.slice(0, hash);
  return body
    .split("&")
    .map((pair) => {
      const eq = pair.indexOf("=");
      if (eq < 0) return pair;
      const key = pair.slice(0, eq);
      let name = key;
      try {
        name = decodeURIComponent(key.replace(/\+/g, " "));
      } catch {
        // an undecodable name is treated as a secret's
      }
      return SHOWN_QUERY_KEYS.has(name.toLowerCase()) && !/%|pass/i.test(pair.slice(eq + 1)) ? pair : `${key}=***`;
    })
    .join("&");
}

/** `text` with every PEM block (BEGIN … END, or BEGIN to the end when it is cut short) replaced, by a linear scan. */
function cutKeyBlocks(text: string): string {
  if (!text.includes("-----BEGIN") && !text.includes("-----END")) return text;
  let out = "";
  let at = 0;
  for (;;) {
    const begin = text.indexOf("-----BEGIN", at);
    if (begin < 0) break;
    out += text.slice(at, begin);
    const end = text.indexOf("-----END", begin);
    if (end < 0) {
      out += "[key text not shown]";
      at = text.length;
      break;
    }
    const close = text.indexOf("-----", end + 8);
    out += "[key text not shown]";
    at = close < 0 ? text.length : close + 5;
  }
  out += text.slice(at);
  // A lone END line (the block's start cut off): the base64 lines before it may be key material.
  let rest = "";
  at = 0;
  for (;;) {
    const end = out.indexOf("-----END", at);
    if (end < 0) break;
    // Back over the base64 lines before it, not past what was already cut and at most a key's length: linear however many END lines.
    let lineStart = end;
    while (lineStart > at && end - lineStart < 8192 && /[A-Za-z0-9+/=\r\n]/.test(out[lineStart - 1] as string)) lineStart--;
    const close = out.indexOf("-----", end + 8);
    rest += `${out.slice(at, lineStart)}[key text not shown]`;
    at = close < 0 ? out.length : close + 5;
  }
  return rest + out.slice(at);
}
