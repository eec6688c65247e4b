import { STATES, workspaceMachine } from '../../../protocol/index.js';

/** One transition of protocol/workspace-machine.ts: an event handler with a target, or an `always`. */
export interface Edge {
  readonly from: string;
  readonly event: string;
  readonly to: string;
}

export const ALWAYS = '(always)';
const key = (e: Edge) => `${e.from}|${e.event}|${e.to}`;

interface TransitionDef {
  /** A target's path from the root: its first element is the public state (TAKEOVER's children are not). */
  readonly target?: readonly { readonly path: readonly string[] }[] | undefined;
}
interface NodeLike {
  readonly transitions: Map<string, readonly TransitionDef[]>;
  readonly always?: readonly TransitionDef[] | undefined;
  readonly states: Record<string, NodeLike>;
}

/** A state node and every node nested in it: their transitions all leave the same public state. */
const withChildren = (node: NodeLike): NodeLike[] => [node, ...Object.values(node.states).flatMap(withChildren)];

/** Read from the machine definition itself, so a transition added later shows up uncovered. */
export function machineEdges(): Edge[] {
  const edges: Edge[] = [];
  const seen = new Set<string>();
  const add = (edge: Edge) => {
    if (!seen.has(key(edge))) edges.push(edge);
    seen.add(key(edge));
  };
  const states = workspaceMachine.root.states as unknown as Record<string, NodeLike>;
  // A move between TAKEOVER's children stays in TAKEOVER: the journal cannot show it, so it is no edge.
  const move = (from: string, event: string, to: string | undefined) => {
    if (to !== undefined && to !== from) add({ from, event, to });
  };
  for (const from of STATES) {
    const top = states[from];
    if (top === undefined) continue;
    for (const node of withChildren(top)) {
      for (const [event, defs] of node.transitions) for (const def of defs) for (const target of def.target ?? []) move(from, event, target.path[0]);
      for (const def of node.always ?? []) for (const target of def.target ?? []) move(from, ALWAYS, target.path[0]);
    }
  }
  return edges;
}

export interface Attribution {
  /** Edge key → times it fired. */
  readonly edges: Map<string, number>;
  /** State → records that left the workspace in it. */
  readonly visits: Map<string, number>;
  /** Observed changes of state that no chain of machine transitions explains. */
  readonly unexplained: Map<string, number>;
}

/**
 * Maps observed `from —event→ to` changes (one journal record each) onto machine edges: the event's
 * own transition (or none, for a handler without a target) followed by at most two `always` moves.
 */
export function attribute(observed: ReadonlyMap<string, number>, edges: readonly Edge[]): Attribution {
  const edgeCounts = new Map<string, number>();
  const visits = new Map<string, number>();
  const unexplained = new Map<string, number>();
  const inc = (map: Map<string, number>, k: string, n: number) => map.set(k, (map.get(k) ?? 0) + n);
  const always = (from: string) => edges.filter((e) => e.from === from && e.event === ALWAYS);
  for (const [k, n] of observed) {
    const [from = '', event = '', to = ''] = k.split('|');
    inc(visits, to, n);
    if (from === to) continue;
    const direct = edges.filter((e) => e.from === from && e.event === event);
    const starts: { path: Edge[]; at: string }[] = direct.length > 0 ? direct.map((e) => ({ path: [e], at: e.to })) : [{ path: [], at: from }];
    let found: Edge[] | null = null;
    for (const start of starts) {
      if (start.at === to && start.path.length > 0) found = start.path;
      for (const a1 of always(start.at)) {
        if (found === null && a1.to === to) found = [...start.path, a1];
        for (const a2 of always(a1.to)) if (found === null && a2.to === to) found = [...start.path, a1, a2];
      }
      if (found !== null) break;
    }
    if (found === null) inc(unexplained, k, n);
    else for (const edge of found) inc(edgeCounts, key(edge), n);
  }
  return { edges: edgeCounts, visits, unexplained };
}

export const edgeKey = key;
