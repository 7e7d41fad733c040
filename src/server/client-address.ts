import { isIP } from "node:net";

/**
 * The address a request came from: the socket's peer, unless that peer is
 * one of the reverse proxies the server was told to trust (`serve
 * --trusted-proxy ADDR`), in which case the right-most address of
 * `X-Forwarded-For` that is not itself a trusted proxy (the one the proxy
 * appended: whatever the client wrote to the left of it is its own claim).
 * `X-Forwarded-For` from anyone else is never read.
 */
export function clientAddress(peer: string | undefined, forwardedFor: string | undefined, trustedProxies: ReadonlySet<string>): string {
  const from = normalizeAddress(peer ?? "");
  if (from === "" || !trustedProxies.has(from) || forwardedFor === undefined) return from || "unknown";
  const hops = forwardedFor
    .slice(0, 4096)
    .split(",")
    .map((h) => normalizeAddress(h.trim()));
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i] as string;
    if (isIP(hop) === 0) return from;
    if (!trustedProxies.has(hop)) return hop;
  }
  return from;
}

/** An address as the limits count it: every loopback address is one client (127.0.0.0/8 is all this machine), an IPv6 address its /64. */
export function clientKey(address: string): string {
  const a = normalizeAddress(address);
  if (/^127\./.test(a) || a === "::1") return "loopback";
  if (isIP(a) === 6) {
    const groups = expandIPv6(a);
    return groups ? `${groups.slice(0, 4).join(":")}::/64` : a;
  }
  return a;
}

/** `::ffff:1.2.3.4` as `1.2.3.4`, lower case, without a zone. */
export function normalizeAddress(address: string): string {
  const a = address.toLowerCase().replace(/%.*$/, "");
  return a.startsWith("::ffff:") && isIP(a.slice(7)) === 4 ? a.slice(7) : a;
}

/** A `--trusted-proxy` value: one IP address (a proxy's own address, as the server's socket sees it). */
export function parseTrustedProxy(text: string): string | undefined {
  const a = normalizeAddress(text.trim());
  return isIP(a) === 0 ? undefined : a;
}

function expandIPv6(a: string): string[] | undefined {
  const [head, tail] = a.split("::") as [string, string | undefined];
  const left = head === "" ? [] : head.split(":");
  const right = tail === undefined || tail === "" ? [] : tail.split(":");
  if (right.some((g) => g.includes("."))) return undefined;
  const fill = 8 - left.length - right.length;
  if (fill < 0 || (tail === undefined && fill !== 0)) return undefined;
  return [...left, ...Array(fill).fill("0"), ...right].map((g) => g.padStart(4, "0"));
}
