export interface RealisticPrompt {
  id: string;
  n: number;
  domain: readonly [string, string, string];
  role: string;
  title: string;
  twin?: string;
  twinTitle?: string;
  requires: string[];
  related: string[];
}
export function pairsFor(total: number): number;
export function realisticFrontmatter(p: RealisticPrompt): string[];
export function realisticPrompts(total: number): { prompts: RealisticPrompt[]; pairs: number };
export function realisticPromptFile(p: RealisticPrompt): string;
export function generateRealSuite(
  dir: string,
  total: number,
): { dir: string; prompts: number; pairs: number; unpaired: number; bytes: number; frontmatterLines: number };
