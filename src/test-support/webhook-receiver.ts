import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { verifyDelivery } from "../notify/sign-delivery.js";

/** One delivery a receiver took: its ID, the body as JSON, and whether its signature verified with the package's verifier. */
export interface Delivery {
  id: string;
  body: Record<string, unknown>;
  verified: boolean;
  error?: string;
}

/** How a test receiver answers each request: a status, or never, or a body that never ends. */
export type ReceiverBehaviour = (n: number, req: IncomingMessage, res: ServerResponse) => unknown;

/** A webhook receiver on 127.0.0.1 that records every delivery and checks its signature. */
export interface WebhookReceiver {
  url: string;
  deliveries: Delivery[];
  /** Distinct deliveries by ID, in the order first received (what a receiver that de-duplicates keeps). */
  unique(): Delivery[];
  /** Connections the sender closed while the receiver was still answering (a capped read). */
  cutOff: number;
  /** Set the secret deliveries are verified with (known once `notify add` made it). */
  secret: string;
  close(): Promise<void>;
}

/** Start a receiver; `behave` says how to answer (default 204). */
export async function startWebhookReceiver(secret = "", behave?: ReceiverBehaviour): Promise<WebhookReceiver> {
  const deliveries: Delivery[] = [];
  const receiver: WebhookReceiver = {
    url: "",
    deliveries,
    secret,
    cutOff: 0,
    unique: () => {
      const seen = new Set<string>();
      return deliveries.filter((d) => {
        if (seen.has(d.id)) return false;
        seen.add(d.id);
        return true;
      });
    },
    close: async () => {},
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      let verified = false;
      let error: string | undefined;
      try {
        verifyDelivery(receiver.secret, text, headers);
        verified = true;
      } catch (e) {
        error = (e as Error).message;
      }
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(text);
      } catch {}
      deliveries.push({ id: String(req.headers["webhook-id"]), body, verified, error });
      res.on("close", () => {
        if (!res.writableFinished) receiver.cutOff++;
      });
      if (behave) behave(deliveries.length, req, res);
      else res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}

/** Resolve once `check` holds, looking every 20 ms; throws with `what` after `ms` (a bound on a hang, not a timed assertion). */
export async function eventually(check: () => boolean | Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`never happened: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
