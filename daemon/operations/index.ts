export { createOperations, OPERATION_HEADER, unfollowed, type Operation, type Operations, type OperationView, type Progress } from './operation-registry.js';
