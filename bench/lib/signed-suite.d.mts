/** Types of signed-suite.mjs (plain JavaScript: the bench runs without a compiler). */
export function makeSignedSuite(
  root: string,
  sourceSuite: string,
  dir: string,
  cli: string,
): Promise<{ suite: string; key: string; freezeKey: string; home: string }>;
