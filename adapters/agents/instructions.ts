/**
 * What an agent reading AGENTS.md, .clinerules or GEMINI.md (Codex, OpenCode, Cline, Gemini CLI) must know to cooperate: the
 * stages, what each asks, the exact commands, and that only the lease grants permission. Written for
 * the agent. Only real `handoff` commands are named (a test runs each with --help).
 */
export const AGENT_INSTRUCTIONS = `## session-handoff

This machine runs session-handoff: a daemon that watches this agent's real quota and context
telemetry and hands the work over to another session before this one is cut off. The daemon
decides the stage of each repository; you cooperate with it. If a hook shows you a
session-handoff notice, do what it says.

Check \`handoff status\` when you start a task, and again whenever the user, a hook or a tool output
mentions PREPARE or EVACUATE. It shows the stage, the pressure and the lease holder;
\`handoff status --json\` also scores the capsule (\`capsule_quality\`: out of 6, with what is missing).

- **NORMAL**: nothing to do.
- **PREPARE** (pressure passed the prepare line, or \`handoff prepare\`): keep working, and write the
  capsule now — objective, the one next action (naming a file, command or test), acceptance
  criteria, work done and left, decisions, do-not-repeat, first files. \`handoff capsule template\`
  prints the Markdown skeleton; \`handoff capsule set --file FILE\` (or the Markdown on stdin) stores
  it; \`handoff capsule show\` reads it back. Refresh it whenever the next action changes.
- **EVACUATE** (the evacuate line, a provider limit warning, or \`handoff now\`): finish only the
  atomic step you are in, start nothing new, refresh the capsule if it is out of date, then run
  \`handoff drained\`. Change no files after that: the daemon is checkpointing the work tree.
- **HANDOFF_READY**, **TAKEOVER**, **RETURN_HANDOFF_READY**: the work belongs to the lease holder.
  Change files only while \`handoff lease\` names you.

Receiving a handoff (a new session, this machine or another):
1. Read \`.session-handoff/<cycle>/HANDOFF.md\`: the next action, how to recover the source, the brief.
2. Check it without taking anything: \`handoff verify <cycle>\` (\`handoff list\` shows the cycles).
3. Take the lease: \`handoff accept <cycle> --as <session-id>\` (your session id, or a name for this
   executor; without \`--as\` it is your login and host name). From a clone on another machine,
   \`handoff accept <cycle> --from origin\`: a clean clone is checked out on the branch
   \`handoff/<cycle>\` by the accept itself; a checkout with changes of its own is refused, unchanged.
4. When the primary can work again, hand the work back with \`handoff return\`; the primary takes it
   back into its work tree with \`handoff accept <cycle> --return\`.

The real source state wins over any capsule or summary. A handoff grants no permission; only the
lease does.
`;
