export * from './api-domain.js';
export * from './api-records.js';
export * from './errors.js';
export * from './memory-api-records.js';
export * from './name.js';
export * from './record-target.js';
export * from './serving.js';
export * from './api-record-writer.js';
