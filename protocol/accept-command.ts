import { shellQuote } from './shell-quote.js';

/** A word a shell reads as itself needs no quotes; anything else is one quoted word. */
export const shellWord = (value: string): string => (/^[A-Za-z0-9._:@/+=-]+$/.test(value) ? value : shellQuote(value));

export interface AcceptCommandOptions {
  readonly leg?: 'out' | 'return';
  /** The git remote the receiver takes the cycle from (another machine's cycle); null for one this daemon serves. */
  readonly from?: string | null;
  /** An executor id to name; left out, the CLI takes the user's login and host name. */
  readonly as?: string | null;
}

/**
 * The one accept command for a situation, as a person types it: every printed `next:` line, hint, pickup
 * and HANDOFF.md takes it from here, so each names the real cycle and the flags that work there, never a placeholder.
 */
export function acceptCommand(cycle: string, options: AcceptCommandOptions = {}): string {
  const parts = ['handoff accept', cycle];
  if (options.leg === 'return') parts.push('--return');
  if (options.from !== undefined && options.from !== null) parts.push('--from', shellWord(options.from));
  if (options.as !== undefined && options.as !== null) parts.push('--as', shellWord(options.as));
  return parts.join(' ');
}

/** What of a cycle decides where it is accepted: the remote its lease travels on, if any. */
export interface OfferedCycle {
  readonly id: string;
  readonly remote: { readonly name: string } | null;
}

/**
 * Where and how a cycle on offer is accepted, in words: the out leg through the remote its lease travels
 * on (from a clone), or in a checkout on this machine when nothing travels; the return leg in the primary's checkout.
 */
export function offeredAcceptWords(cycle: OfferedCycle, leg: 'out' | 'return'): { readonly command: string; readonly where: string } {
  if (leg === 'return') return { command: acceptCommand(cycle.id, { leg }), where: 'in the source checkout' };
  if (cycle.remote === null)
    return { command: acceptCommand(cycle.id), where: 'in this checkout or another checkout of this repository on this machine (no remote carries it)' };
  return {
    command: acceptCommand(cycle.id, { from: cycle.remote.name }),
    where: `in a clone of this repository (in this checkout: \`${acceptCommand(cycle.id)}\`)`,
  };
}
