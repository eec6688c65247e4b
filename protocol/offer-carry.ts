/**
 * What `handoff pause` / `unpause` did to an offer on a remote: the offer carries the source's pause,
 * and another machine's accept reads it there. The answer says whether it is out there already.
 */
export interface OfferCarry {
  readonly cycle: string;
  readonly remote: string;
  /** The offer on the remote now says what the switch says. */
  readonly carried: boolean;
  /** Why it does not yet: the remote's refusal or silence. */
  readonly error: string | null;
}

/** One line per offer, for the person who just flipped the switch. */
export function offerCarryWords(carry: OfferCarry, paused: boolean): string {
  if (carry.carried) {
    return paused
      ? `the offer of cycle ${carry.cycle} on ${carry.remote} now says paused: another machine's accept is refused`
      : `the offer of cycle ${carry.cycle} on ${carry.remote} is open again: another machine may accept it`;
  }
  // The error says why (the remote's silence, its refusal, or an accept made there first); the offer on the remote is what another machine reads until the daemon's next try succeeds.
  return `the offer of cycle ${carry.cycle} on ${carry.remote} does not say ${paused ? 'paused' : 'open'} yet: ${carry.error ?? 'no answer'} (the daemon tries again at each \`handoff status\` and lease sync)`;
}
