import { existsSync } from "node:fs";
import type { Browser, BrowserContext, CDPSession, Page } from "playwright-core";

/** Debian's Chromium (.ci/run installs it with apt). */
export const CHROMIUM = "/usr/bin/chromium";
export const HAVE_CHROMIUM = existsSync(CHROMIUM);

/**
 * Headless Chromium with background networking off, one context and page,
 * and a CDP virtual authenticator (ctap2, resident keys, user verification
 * on) standing in for the reviewer's passkey.
 */
export async function launchWithPasskey(viewport = { width: 1000, height: 800 }): Promise<{
  browser: Browser;
  context: BrowserContext;
  page: Page;
  cdp: CDPSession;
}> {
  const { chromium } = await import("playwright-core");
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--disable-default-apps", "--no-first-run"],
  });
  const context = await browser.newContext({ viewport });
  context.setDefaultTimeout(10_000);
  const page = await context.newPage();
  const cdp = await addVirtualAuthenticator(context, page);
  return { browser, context, page, cdp };
}

/** A virtual platform authenticator for `page` (a passkey that answers at once, user verified), as a person's device would be. */
export async function addVirtualAuthenticator(context: BrowserContext, page: Page): Promise<CDPSession> {
  const cdp = await context.newCDPSession(page);
  await cdp.send("WebAuthn.enable");
  await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: {
      protocol: "ctap2",
      transport: "internal",
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return cdp;
}
