export * from './admission.js';
export * from './kubernetes.js';
export * from './layout.js';
export * from './zones.js';
export * from './members.js';
