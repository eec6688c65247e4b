import { assign } from 'xstate';
import type { WorkspaceEvent } from '../workspace-events.js';
import type { WorkspaceContext } from './context.js';

/** xstate's `assign` bound to this machine's context and events, so its actions can live outside `setup()`. */
export const update = assign<WorkspaceContext, WorkspaceEvent, undefined, WorkspaceEvent, never>;
