// Type declarations for CommonJS packages that ship none.

declare module 'wink-porter2-stemmer' {
  /** Porter2 (Snowball English) stem of a lower-case word. */
  function stem(word: string): string;
  export = stem;
}
