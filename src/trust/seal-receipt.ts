import type { Workflow } from "../run/run-schema.js";
import type { SuiteConfig } from "../suite/suite-config.js";
import { requireSeparateDuties, requireTrustedReceipt, type TrustRemedy } from "./enforce-trust.js";
import type { Right } from "./judge-receipt-trust.js";
import { isReceiptSigner, type ReceiptKey, type ReceiptSignature, signReceipt } from "./sign-receipt.js";

/**
 * The last step before any decision is recorded: sign the receipt when a key
 * is given, then refuse it unless the suite's policy trusts it (signature,
 * key, rights, revocation) and separate duties hold. Review, consent and
 * apply approval all pass through here.
 */
export function sealReceipt<R extends { kind: string } & Record<string, unknown>>(
  unsigned: R,
  seal: {
    key: ReceiptKey | undefined;
    person: string;
    right: Right;
    config: SuiteConfig;
    workflow?: Workflow;
    what: string;
    remedy?: TrustRemedy;
  },
): R & { signature?: ReceiptSignature } {
  const receipt = !seal.key
    ? unsigned
    : isReceiptSigner(seal.key)
      ? { ...unsigned, signature: seal.key.sign(unsigned) }
      : signReceipt(unsigned, seal.key, seal.person);
  requireTrustedReceipt(receipt, seal.right, seal.config, seal.remedy);
  if (seal.workflow) requireSeparateDuties(seal.workflow, receipt, seal.config, seal.what);
  return receipt;
}
