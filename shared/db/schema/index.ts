export * from './qa.js';
export * from './access.js';
export * from './newsletter.js';
export * from './polls.js';
export * from './views.js';
export * from './verification-lists.js';
