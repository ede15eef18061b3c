// Type declarations for two CommonJS data packages that ship none.

declare module 'freemail' {
  /** True for free providers, disposable ones included (registrable domain of the address). */
  export function isFree(email: string): boolean;
  export function isDisposable(email: string): boolean;
}

declare module 'role-based-email-addresses' {
  const roles: string[];
  export = roles;
}
