export * from './resource.js';
export * from './actuator.js';
export * from './errors.js';
export * from './driver.js';
export * from './memory-actuators.js';
