export * from './errors.js';
export * from './steps.js';
export * from './record.js';
export * from './path.js';
export * from './admission.js';
export * from './lock.js';
export * from './commands.js';
export * from './owner-notice.js';
