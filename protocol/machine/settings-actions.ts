import { assertEvent } from 'xstate';
import { done } from './outcome.js';
import { update } from './update.js';

/** What the operator and the daemon set beside the stages: pause, policy, the capsule, the rehearsed way out. */
export const settingsActions = {
  setPause: update(({ context, event }) => {
    assertEvent(event, 'PAUSE_SET');
    const code = event.pause === null ? 'unpaused' : 'paused';
    // The API writes the PAUSE file and the watcher then sees it: the second report is moot. A
    // reason written after the file appeared (an editor's save) is news, and keeps the first `since`.
    const current = context.paused[event.scope];
    const next = event.pause;
    if (current === null && next === null) return { outcome: done(code, null, false) };
    if (current !== null && next !== null && current.path === next.path) {
      if (current.reason === next.reason) return { outcome: done(code, null, false) };
      return { paused: { ...context.paused, [event.scope]: { ...next, since: current.since } }, outcome: done(code) };
    }
    return { paused: { ...context.paused, [event.scope]: next }, outcome: done(code) };
  }),
  setPolicy: update(({ event }) => {
    assertEvent(event, 'CONFIG_SET');
    return { policy: event.policy, profile: event.profile, outcome: done('ok') };
  }),
  recordCapsule: update(({ context, event }) => {
    assertEvent(event, 'CAPSULE_SET');
    const same = context.capsule?.sha256 === event.capsule.sha256 && context.capsule?.error === event.capsule.error;
    return { capsule: event.capsule, outcome: done('ok', null, !same) };
  }),
  recordWayOut: update(({ context, event }) => {
    assertEvent(event, 'WAY_OUT');
    return { way_out: event.way_out, outcome: done('ok', null, JSON.stringify(context.way_out ?? null) !== JSON.stringify(event.way_out)) };
  }),
};
