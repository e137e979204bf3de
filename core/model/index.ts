export * from './cidr.js';
export * from './common.js';
export * from './names.js';
export * from './seed.js';
export * from './shoot.js';
