// The parts of the workspace machine, assembled in ../workspace-machine.ts (the module everything else imports).
export { STATES, type Cycle, type Outcome, type Trigger, type WorkspaceContext, type WorkspaceInput, type WorkspaceState } from './context.js';
export { initialContext } from './initial-context.js';
export { guards } from './guards.js';
export { stageActions } from './stage-actions.js';
export { pressureActions } from './pressure-actions.js';
export { drainActions } from './drain-actions.js';
export { leaseActions } from './lease-actions.js';
export { returnActions } from './return-actions.js';
export { settingsActions } from './settings-actions.js';
export { assessNow } from './pressure-now.js';
export { closableOneWay, drainKey, offerTravels } from './cycle-rules.js';
