export * from './constants.js';
export * from './filters.js';
export * from './multi-zonal.js';
export * from './networks.js';
export * from './prepare.js';
export * from './region-distance.js';
export * from './schedule.js';
export * from './score.js';
