export { createDrainRunner, type DrainRunner } from './drain-runner.js';
export { createStepStore, type StepStore } from './step-store.js';
