/**
 * The one registry of result and error codes. Each key equals its `code`, so a code can be looked up
 * by the string that travels in the Envelope. `status` is the HTTP status the API answers with, `exit`
 * the CLI exit code. docs/codes.md documents both and is tested against this table.
 */
export interface CodeSpec<C extends string = string> {
  readonly code: C;
  readonly status: number;
  readonly exit: number;
  readonly summary: string;
}

function registry<T extends { [K in keyof T]: CodeSpec<K & string> }>(table: T): Readonly<T> {
  return Object.freeze(table);
}

export const CODES = registry({
  // Results (2xx, exit 0)
  ok: { code: 'ok', status: 200, exit: 0, summary: 'done' },
  status: { code: 'status', status: 200, exit: 0, summary: 'the state of a workspace' },
  reading_recorded: { code: 'reading_recorded', status: 200, exit: 0, summary: 'a credible reading was recorded' },
  reading_not_credible: {
    code: 'reading_not_credible',
    status: 200,
    exit: 0,
    summary: 'the reading was not credible (unknown percent, stale, window already reset) and changed nothing',
  },
  warning_recorded: { code: 'warning_recorded', status: 200, exit: 0, summary: 'a provider near-limit warning was recorded' },
  ingested: {
    code: 'ingested',
    status: 200,
    exit: 0,
    summary: 'a raw payload was read by its adapter; data lists the readings recorded, unchanged or not credible, unknown metrics, warnings and events',
  },
  prepare_entered: { code: 'prepare_entered', status: 200, exit: 0, summary: 'the workspace is in PREPARE' },
  evacuation_started: { code: 'evacuation_started', status: 200, exit: 0, summary: 'the workspace is in EVACUATE' },
  handoff_ready: { code: 'handoff_ready', status: 200, exit: 0, summary: 'the work is recoverable from a verified checkpoint and the lease is on offer' },
  capsule_saved: { code: 'capsule_saved', status: 200, exit: 0, summary: 'the capsule was validated and written to .session-handoff/capsule.json' },
  capsule_shown: { code: 'capsule_shown', status: 200, exit: 0, summary: 'the capsule on disk, or null when there is none' },
  way_out_rehearsed: {
    code: 'way_out_rehearsed',
    status: 200,
    exit: 0,
    summary: 'a rehearsal of the evacuation ran (`handoff doctor`); `data.way_out` says whether the way out is proven, blocked or unknown',
  },
  agents_live: { code: 'agents_live', status: 200, exit: 0, summary: '`handoff doctor`: every installed agent integration is live' },
  check_clear: { code: 'check_clear', status: 200, exit: 0, summary: '`handoff check`: nothing is interrupted' },
  resume_needed: { code: 'resume_needed', status: 200, exit: 1, summary: '`handoff check`: an evacuation stopped before it finished; run `handoff resume`' },
  cycle_completed: { code: 'cycle_completed', status: 200, exit: 2, summary: '`handoff check`: the last cycle completed its evacuation (or closed)' },
  verified: { code: 'verified', status: 200, exit: 0, summary: 'every takeover check passed (warnings listed); no lease was taken' },
  accepted: { code: 'accepted', status: 200, exit: 0, summary: 'verification passed and the lease was taken; data.token fences every later call' },
  return_started: { code: 'return_started', status: 200, exit: 0, summary: 'the return leg drain started on the holder side' },
  cancelled: {
    code: 'cancelled',
    status: 200,
    exit: 0,
    summary:
      '`handoff cancel`: the stage, drain or offer was ended and recorded as abandoned (an out leg goes back to NORMAL, a return leg to TAKEOVER, also a return on offer through a remote, withdrawn there by its holder); refs already made are kept',
  },
  cycles: { code: 'cycles', status: 200, exit: 0, summary: 'the cycles on record' },
  cycle: { code: 'cycle', status: 200, exit: 0, summary: 'one cycle with every manifest revision and its integrity check' },
  lease_shown: { code: 'lease_shown', status: 200, exit: 0, summary: 'the lease of a workspace' },
  lease_acquired: { code: 'lease_acquired', status: 200, exit: 0, summary: 'the lease was taken; data.token fences every later call' },
  lease_renewed: { code: 'lease_renewed', status: 200, exit: 0, summary: 'the holder renewed its lease' },
  lease_released: { code: 'lease_released', status: 200, exit: 0, summary: 'the holder released its lease' },
  lease_broken: { code: 'lease_broken', status: 200, exit: 0, summary: 'an operator broke the lease; recorded in the journal' },
  paused: { code: 'paused', status: 200, exit: 0, summary: 'the kill switch is on' },
  unpaused: { code: 'unpaused', status: 200, exit: 0, summary: 'the kill switch is off' },
  daemon_stopping: { code: 'daemon_stopping', status: 200, exit: 0, summary: 'the daemon is shutting down' },
  daemon_not_running: {
    code: 'daemon_not_running',
    status: 200,
    exit: 0,
    summary: '`handoff daemon stop` found no daemon for this state dir: nothing to stop',
  },
  journal_repaired: {
    code: 'journal_repaired',
    status: 200,
    exit: 0,
    summary:
      '`handoff journal repair`: the records before the first damaged line were kept, the rest moved to a file beside the journal (or the journal was whole)',
  },
  workspaces: {
    code: 'workspaces',
    status: 200,
    exit: 0,
    summary: 'every workspace the daemon knows, with its status, plain-words summary and readings timeline',
  },
  dashboard_link: {
    code: 'dashboard_link',
    status: 200,
    exit: 0,
    summary: 'a one-time dashboard link: it works once, within 60 s, and sets the browser session cookie',
  },
  agent_context: {
    code: 'agent_context',
    status: 200,
    exit: 0,
    summary: 'what the stage asks of one agent session now: a short text to inject, or null (told once per stage per session)',
  },
  operations: {
    code: 'operations',
    status: 200,
    exit: 0,
    summary:
      'the requests the daemon is working on now (accept, verify): each with its phase, how long it has run, and whether it is past the point where the lease moves',
  },

  // Inspect-only outcomes
  wrong_state: { code: 'wrong_state', status: 409, exit: 10, summary: 'the workspace is not in a state that allows this' },

  diverged: { code: 'diverged', status: 409, exit: 10, summary: 'the real source state differs from the record; real state wins; no lease' },
  stale: { code: 'stale', status: 409, exit: 10, summary: 'the manifest is older than the takeover max age; no lease' },
  ambiguous: { code: 'ambiguous', status: 409, exit: 11, summary: 'several cycles match; none was chosen' },
  cycle_resolved: { code: 'cycle_resolved', status: 200, exit: 0, summary: 'a unique start of a cycle id named this cycle' },
  unknown_cycle: { code: 'unknown_cycle', status: 404, exit: 10, summary: 'no cycle with this id on record' },
  agents_not_live: {
    code: 'agents_not_live',
    status: 409,
    exit: 10,
    summary:
      '`handoff doctor`: an agent is installed but not live: its config has our hooks, yet the agent would skip them (a command that does not start, a Codex hook nobody trusted); data holds the report, the hint the one step per agent',
  },

  // Input rejected
  usage_error: { code: 'usage_error', status: 400, exit: 64, summary: 'the command line is wrong' },
  not_a_repository: { code: 'not_a_repository', status: 400, exit: 64, summary: 'the directory is not inside a git repository' },
  not_found: { code: 'not_found', status: 404, exit: 64, summary: 'no such API route' },
  malformed_json: { code: 'malformed_json', status: 400, exit: 65, summary: 'the body is not valid JSON' },
  invalid_body: { code: 'invalid_body', status: 400, exit: 65, summary: 'the body or query does not match its schema' },
  body_too_large: { code: 'body_too_large', status: 413, exit: 65, summary: 'the body is over the size limit' },
  invalid_config: { code: 'invalid_config', status: 500, exit: 65, summary: 'the config file does not match its schema' },
  unsupported_media_type: { code: 'unsupported_media_type', status: 415, exit: 65, summary: 'the body is not application/json' },

  // Daemon unreachable
  daemon_unreachable: {
    code: 'daemon_unreachable',
    status: 503,
    exit: 69,
    summary:
      "no daemon answers for this state dir: the socket refuses, or it stopped answering even the CLI's cheap liveness request (`GET /v1/operations`) while a long request ran; a daemon at work is followed, never reported unreachable",
  },
  interrupted: {
    code: 'interrupted',
    status: 409,
    exit: 75,
    summary:
      'Ctrl-C (or a caller gone) during a request the CLI follows: cancelled before the lease moved, nothing was changed; once the lease was moving it goes on, and the message says how to see its result',
  },
  service_unavailable: {
    code: 'service_unavailable',
    status: 503,
    exit: 69,
    summary: '`handoff service install`: no user service manager answers here (no user systemd session); nothing was written; retrying will not help',
  },

  // Corrupt records
  corrupt_record: { code: 'corrupt_record', status: 500, exit: 74, summary: 'a stored record failed its checksum or does not parse; nothing was deleted' },

  // Temporary failures
  remote_unreachable: {
    code: 'remote_unreachable',
    status: 502,
    exit: 75,
    summary:
      'the git remote that carries the lease could not be reached; nothing was changed; retry (a push whose answer was lost and could not be read back says the outcome is unknown: `handoff status` reads it)',
  },
  daemon_already_running: { code: 'daemon_already_running', status: 409, exit: 75, summary: 'another daemon already serves this state dir' },
  internal_error: { code: 'internal_error', status: 500, exit: 75, summary: 'the daemon failed unexpectedly; it logged the cause' },

  install_refused: {
    code: 'install_refused',
    status: 409,
    exit: 65,
    summary: '`handoff install`: an agent file cannot be edited safely (a link, a read-only file, unparseable, a damaged block); nothing was changed',
  },
  linked_path: {
    code: 'linked_path',
    status: 409,
    exit: 65,
    summary:
      'a path the daemon writes a record to in this checkout (`.session-handoff/`, a cycle directory or a file of it) is a symbolic link or not what it must be; nothing was written',
  },
  install_failed: {
    code: 'install_failed',
    status: 500,
    exit: 75,
    summary: '`handoff install`: writing an agent file failed; every file was put back, or the ones that could not be are named',
  },
  service_failed: {
    code: 'service_failed',
    status: 500,
    exit: 75,
    summary: '`handoff service`: systemctl or launchctl refused a step; the steps done before it are named',
  },

  drain_blocked: {
    code: 'drain_blocked',
    status: 409,
    exit: 75,
    summary: 'a drain step failed; nothing of the user was changed; fix the cause and run `handoff resume`',
  },

  // Denied
  unauthorized: {
    code: 'unauthorized',
    status: 401,
    exit: 77,
    summary: 'missing or wrong bearer token (the dashboard: no valid session cookie or one-time ticket)',
  },
  forbidden_host: { code: 'forbidden_host', status: 403, exit: 77, summary: 'the Host header is not a loopback name of this port' },
  forbidden_origin: {
    code: 'forbidden_origin',
    status: 403,
    exit: 77,
    summary: 'a browser request from another origin: the API refuses any Origin; the dashboard any but its own page',
  },
  lease_held: { code: 'lease_held', status: 409, exit: 77, summary: 'another executor holds the lease' },
  stale_token: { code: 'stale_token', status: 409, exit: 77, summary: 'the lease token is not the current one' },
  checkout_incomplete: {
    code: 'checkout_incomplete',
    status: 409,
    exit: 75,
    summary:
      'git could not move the work tree for an accept (a cause the pre-check cannot see): on the out leg, after the lease moved, the accept is undone (the lease on offer again, the token spent) and the hint is the accept to run again (or, when the remote cannot be told, the command that finishes the move); on the return leg, before the cycle closed, nothing else moved and the hint is the same accept to run again',
  },
  lease_travels: {
    code: 'lease_travels',
    status: 409,
    exit: 77,
    summary:
      'the lease is on offer on the git remote (`refs/handoff/lease/<cycle>`, HANDOFF_READY or RETURN_HANDOFF_READY): nobody holds it, so a lease acquire, release or break has nothing to move; `handoff accept` takes it, `handoff cancel` withdraws an out leg',
  },
  remote_refused: {
    code: 'remote_refused',
    status: 409,
    exit: 77,
    summary:
      "the git remote's own policy (a hook, a protected ref) declined the lease record, or git or the remote refused a prune's deletion (a look-alike ref made it ambiguous): the message names the ref and the reason; nothing was changed",
  },
  paused_denied: { code: 'paused_denied', status: 423, exit: 77, summary: 'the kill switch is on; unpause first' },
  insecure_state_dir: { code: 'insecure_state_dir', status: 500, exit: 77, summary: 'the state dir or token file is accessible to others' },
  state_dir_unusable: {
    code: 'state_dir_unusable',
    status: 500,
    exit: 77,
    summary:
      'the state dir cannot be made or written (read-only file system, permission denied, a file in the way): choose another with --state-dir or HANDOFF_STATE_DIR',
  },
});

export type Code = keyof typeof CODES;

export function codeSpec(code: Code): CodeSpec {
  return CODES[code];
}

export function isSuccess(code: Code): boolean {
  // Stryker disable next-line EqualityOperator: equivalent, no code in the registry has status 300.
  return CODES[code].status < 300;
}
