export * from './schema.js';
export * from './protocol.js';
export * from './build.js';
