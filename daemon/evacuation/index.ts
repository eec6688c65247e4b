export { createDrainRunner, type DrainRunner } from './drain-runner.js';
