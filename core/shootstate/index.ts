export * from './types.js';
export * from './errors.js';
export * from './blob-store.js';
export * from './store.js';
export * from './collect.js';
export * from './pack.js';
export * from './schema.js';
export * from './flows.js';
