import { execFileSync } from "node:child_process";
import path from "node:path";

/**
 * A self-signed certificate for localhost and its private key (P-256, valid a
 * day), written by openssl into `dir` as cert.pem and key.pem: what a person
 * passes to `twinlock serve --tls-cert --tls-key`.
 */
export function selfSignedCertificate(dir: string): { cert: string; key: string } {
  const [cert, key] = [path.join(dir, "cert.pem"), path.join(dir, "key.pem")];
  execFileSync(
    "openssl",
    ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=localhost", "-days", "1"].concat([
      "-keyout",
      key,
      "-out",
      cert,
    ]),
    { stdio: "ignore" },
  );
  return { cert, key };
}
