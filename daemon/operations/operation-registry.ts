import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.js';

/** What a long request tells while it works, and the one point after which it is not cancelled. */
export interface Progress {
  /** What it does now, in words a person reads: "listing the offers on 'origin'". */
  phase(words: string): void;
  /**
   * Called once, just before the first change that cannot be taken back (the lease moves): false when
   * the operation was cancelled first, and then nothing may change. After it, a cancel is refused.
   */
  commit(): boolean;
}

/** For callers nobody follows (tests of the service, internal calls). */
export const unfollowed: Progress = { phase: () => undefined, commit: () => true };

export interface OperationView {
  readonly operation: string;
  readonly what: string;
  readonly phase: string;
  readonly elapsed_ms: number;
  /** Past its point of no return: it goes on whatever the caller does. */
  readonly committed: boolean;
  readonly cancelled: boolean;
}

export interface Operation extends Progress {
  readonly id: string;
  /** Cancels unless already committed. */
  cancel(): void;
  end(): void;
}

/** The header a CLI names its request with, to follow it (`GET /v1/operations`) and to cancel it. */
export const OPERATION_HEADER = 'handoff-operation';

/** The id a caller names its request with (`handoff-operation` header, the cancel body). */
export const OPERATION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface Live {
  readonly what: string;
  readonly started: number;
  phase: string;
  committed: boolean;
  cancelled: boolean;
}

/**
 * The requests the daemon is working on now (accept, verify): what the CLI shows while it follows one,
 * and how it cancels one. Only live requests are held, so the table is bounded by open connections.
 */
export function createOperations(clock: Clock) {
  const live = new Map<string, Live>();
  const viewOf = (id: string, op: Live): OperationView => ({
    operation: id,
    what: op.what,
    phase: op.phase,
    elapsed_ms: clock.now() - op.started,
    committed: op.committed,
    cancelled: op.cancelled,
  });
  const cancel = (op: Live) => void (op.cancelled ||= !op.committed);
  return {
    begin(asked: string | null, what: string): Operation {
      // A caller's id already in use (or none) gets a fresh one: one request never steers another.
      const id = asked !== null && OPERATION_ID.test(asked) && !live.has(asked) ? asked : randomUUID();
      const op: Live = { what, started: clock.now(), phase: 'starting', committed: false, cancelled: false };
      live.set(id, op);
      return {
        id,
        phase: (words) => void (op.phase = words),
        commit() {
          if (op.cancelled) return false;
          op.committed = true;
          return true;
        },
        cancel: () => cancel(op),
        end: () => void live.delete(id),
      };
    },
    list: (): OperationView[] => [...live].map(([id, op]) => viewOf(id, op)),
    /** Cancels the live operation `id` unless it is past its point of no return; null when none is live. */
    cancel(id: string): OperationView | null {
      const op = live.get(id);
      if (op === undefined) return null;
      cancel(op);
      return viewOf(id, op);
    },
  };
}

export type Operations = ReturnType<typeof createOperations>;
