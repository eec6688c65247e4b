export { createAgentContextService, type AgentContextAnswer, type AgentContextDeps, type AgentContextService } from './agent-context-service.js';
export { SessionActivity } from './session-activity.js';
export { AGENT_CONTEXT_FILE, SESSIONS_KEPT, SessionRecords } from './session-records.js';
