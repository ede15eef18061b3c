/**
 * Finds source code pasted as prose. Code inside fences (``` or ~~~), indented by four spaces or
 * a tab (Markdown code blocks), or inside backticks is formatted and ignored; what remains is
 * checked line by line for shapes that prose rarely has.
 */

const CODE_LINE_PATTERNS: readonly RegExp[] = [
  /[;{}]\s*$/, // statement or block ends
  /^\s*(?:def|class|import|from\s+\S+\s+import|function|const|let|var|return|public|private|#include|SELECT|INSERT|UPDATE)\b/,
  /^\s*(?:if|for|while|switch)\s*\(.*\)/,
  /=>|==|!=|&&|\|\||\+\+|::/,
  /\w+\([^)]*\);?\s*$/, // call at the end of a line: print(x), foo();
  /^\s*<\/?[a-z][\w-]*(?:\s[^>]*)?>\s*$/i, // a line that is one HTML tag
  /^\s*\$\s+\S+/, // a shell prompt
];

export interface CodeScan {
  /** Text with formatted code removed, for readability and word counts. */
  prose: string;
  /** Lines outside code formatting that look like code. */
  unformattedCodeLines: number;
  /** Whether the post contains formatted code at all. */
  hasFormattedCode: boolean;
}

export function scanCode(text: string): CodeScan {
  const prose: string[] = [];
  let unformattedCodeLines = 0;
  let hasFormattedCode = false;
  let fence: string | null = null;
  for (const line of text.replace(/\r\n?/g, '\n').split('\n')) {
    const fenceMark = /^\s*(```|~~~)/.exec(line)?.[1];
    if (fenceMark) {
      hasFormattedCode = true;
      fence = fence === null ? fenceMark : fence === fenceMark ? null : fence;
      continue;
    }
    if (fence !== null) continue;
    if (/^(?: {4}|\t)\S/.test(line)) {
      hasFormattedCode = true;
      continue;
    }
    const withoutInline = line.replace(/`[^`]*`/g, (m) => {
      hasFormattedCode = true;
      return m.length > 2 ? ' code ' : ' ';
    });
    if (looksLikeCode(withoutInline)) unformattedCodeLines += 1;
    prose.push(withoutInline);
  }
  return { prose: prose.join('\n'), unformattedCodeLines, hasFormattedCode };
}

function looksLikeCode(line: string): boolean {
  const trimmed = line.trim();
  if (trimmed.length < 3) return false;
  // A sentence ending in "." or "?" that merely mentions "foo()" is prose.
  if (/[.?!]$/.test(trimmed) && !/[;{}]$/.test(trimmed)) return false;
  // Links are prose in a forum post, even though "://" and "()" look technical.
  if (/^https?:\/\/\S+$/.test(trimmed)) return false;
  return CODE_LINE_PATTERNS.some((pattern) => pattern.test(line));
}
