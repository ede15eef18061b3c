// Type declarations for a CommonJS data package that ships none.

declare module 'role-based-email-addresses' {
  const roles: string[];
  export = roles;
}
