/**
 * What an agent without hooks (Codex, Cline, OpenCode) must know to cooperate: the stages, the one
 * command each stage asks for, and that only the lease grants permission. Written for the agent.
 */
export const AGENT_INSTRUCTIONS = `## session-handoff

This machine runs session-handoff: a daemon that watches this agent's real quota and context
telemetry and hands the work over before the session dies. The daemon decides the stage; you cooperate.

- \`handoff status\` shows the stage of this repository. Check it when you start a task and whenever
  the user or a hook mentions PREPARE or EVACUATE.
- PREPARE: keep working, and keep the capsule current (objective, decisions, the one next action):
  \`handoff capsule template\` prints its shape, \`handoff capsule set --file FILE\` stores it.
- EVACUATE: finish only the current atomic step, start nothing new, refresh the capsule, then run
  \`handoff drained\`. Change no files after that.
- HANDOFF_READY, TAKEOVER, RETURN_HANDOFF_READY: the work belongs to the lease holder. Change files
  only when \`handoff lease\` names you.
- Taking over a handoff: read \`.session-handoff/<cycle>/HANDOFF.md\`, check it with
  \`handoff verify <cycle>\`, then \`handoff accept <cycle> --as <your session id>\`.
- The real source state wins over any capsule or summary. A handoff grants no permission; only the
  lease does.
`;
