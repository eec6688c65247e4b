/** The Claude Code slash command `handoff install claude` writes: `/handoff-capsule`. */
export const CAPSULE_COMMAND_FILE = 'handoff-capsule.md';

/**
 * A prompt for the agent: write the continuation capsule in one step, from what it knows now. The
 * capsule goes through stdin (a here-document) rather than a file: in EVACUATE the lease guard may
 * close file edits to this session, but never the shell. Only real `handoff` commands are named
 * (a test runs each with --help).
 */
export const CAPSULE_COMMAND = `---
description: Write the session-handoff capsule (objective, next action, decisions) so another session can continue this work
argument-hint: "[what to stress in the capsule]"
allowed-tools: Bash(handoff status:*), Bash(handoff capsule template:*), Bash(handoff capsule set:*), Bash(handoff capsule show:*)
---
Write the session-handoff capsule for this repository now, from what you know at this moment, so that
another session (or you, after the context is cut) can continue without asking anything.

1. Run \`handoff status\` for the stage and \`handoff capsule show\` for the capsule stored now, if any.
2. Run \`handoff capsule template\` to see every heading. Fill in what applies, in your own words:
   - **Objective**: one or two sentences — what this work is for.
   - **Next action**: exactly one action that names a file, a command or a test.
   - **Acceptance criteria**: how the receiver knows the work is done.
   - **Work**: Completed, In progress, Remaining (and Blocked, Deferred if any).
   - **Decisions** and **Do not repeat**: what was decided and why; what was tried and failed.
   - **First files**: repository paths to open first (they must exist).
   - Risks, scope, assumptions when they matter. Never secrets, tokens or environment values.
3. Store it in one command, the Markdown on stdin:

\`\`\`sh
handoff capsule set <<'CAPSULE'
# Handoff capsule
## Objective
…
## Next action
…
CAPSULE
\`\`\`

4. It answers \`capsule_saved\`, or names the heading or field it refused. \`handoff status --json\`
   then reports \`capsule_quality\`: the score out of 6 and what is missing; fix what it names.
   Do not change any other file for this.

$ARGUMENTS
`;
