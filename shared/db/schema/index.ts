export * from './qa.js';
export * from './access.js';
export * from './newsletter.js';
export * from './polls.js';
export * from './views.js';
export * from './deliveries.js';
export * from './admin-sessions.js';
export * from './verification-lists.js';
