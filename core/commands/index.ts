export * from './schema.js';
export * from './protocol.js';
