import { createHmac, timingSafeEqual } from 'node:crypto';
import { PROTOCOL_VERSION, success, type Envelope } from '../../protocol/index.js';

/** Binds a proof to this protocol, so an HMAC the daemon computes can mean nothing else. */
const CONTEXT = 'session-handoff hello v1';

export interface HelloFacts {
  readonly nonce: string;
  /** The loopback port the daemon listens on: a relay on another port cannot pass its proof on. */
  readonly port: number;
  readonly pid: number;
}

/**
 * HMAC-SHA256 under the token (its 64 hex characters as the key) of
 * `session-handoff hello v1\n<nonce>\n<port>\n<pid>`, in hex. Documented in docs/http-api.md so any
 * client can check it before it sends the token.
 */
export function helloProof(token: string, facts: HelloFacts): string {
  return createHmac('sha256', token).update(`${CONTEXT}\n${facts.nonce}\n${facts.port}\n${facts.pid}`).digest('hex');
}

/** The client's side: the answer proves its sender holds `token` and listens on the port the client dialled. */
export function helloVerified(token: string, facts: HelloFacts, proof: string): boolean {
  const expected = Buffer.from(helloProof(token, facts), 'hex');
  const presented = Buffer.from(/^[0-9a-f]{64}$/.test(proof) ? proof : '', 'hex');
  return presented.length === expected.length && timingSafeEqual(presented, expected);
}

export interface HelloDeps {
  readonly token: string;
  readonly port: () => number;
  readonly pid: number;
}

/** The answer to `POST /v1/hello`: who answers, and the proof that it holds the token. */
export function helloAnswer(deps: HelloDeps, nonce: string): Envelope {
  const facts = { nonce, port: deps.port(), pid: deps.pid };
  return success('ok', { pid: facts.pid, port: facts.port, protocol_version: PROTOCOL_VERSION, proof: helloProof(deps.token, facts) });
}
