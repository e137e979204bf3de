export * from './errors.js';
export * from './record-name.js';
export * from './check.js';
export * from './owner-records.js';
export * from './memory-owner-records.js';
export * from './failing-owner-records.js';
export * from './api-lookup.js';
export * from './watchdog.js';
