import { findNodeAtLocation, parseTree, printParseErrorCode, type Node, type ParseError } from 'jsonc-parser';
import { HandoffError } from '../../protocol/errors.js';

export type Json = Record<string, unknown>;

export function refuse(path: string, problem: string): HandoffError {
  return new HandoffError('install_refused', `${path}: ${problem}`, 'fix the file by hand, then install again; nothing was changed');
}

interface Edit {
  readonly offset: number;
  readonly length: number;
  readonly content: string;
}

/** Renders one inserted property or element at an indentation (null: inline). */
type Item = (indent: string | null) => string;

/** Where a parse error is, as an editor shows it: line and column, from 1. */
function position(text: string, offset: number): string {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return `line ${line}, column ${offset - before.lastIndexOf('\n')}`;
}

/**
 * A JSON (or JSONC: comments allowed) config file changed by small edits at known places, never
 * re-serialized: every byte outside an edit stays as it was — numbers the way they were written
 * (`12345678901234567890`, `1.0`), comments, layout. What is inserted follows the indentation and
 * line ends around it. One parse, one pass to apply: linear in the size of the file.
 */
export class JsonDocument {
  readonly root: Node;
  private readonly text: string;
  private readonly edits: Edit[] = [];
  private readonly additions = new Map<Node, Item[]>();
  private readonly unit: string;
  private readonly eol: string;

  /** null or blank text: a new file. A trailing comma or anything else the strict reader refuses is refused. */
  constructor(text: string, path: string) {
    this.text = text.trim() === '' ? '{}\n' : text;
    const errors: ParseError[] = [];
    const root = parseTree(this.text, errors, { allowTrailingComma: false, disallowComments: false });
    const first = errors[0];
    if (first !== undefined) throw refuse(path, `not valid JSON (${printParseErrorCode(first.error)} at ${position(this.text, first.offset)})`);
    if (root?.type !== 'object') throw refuse(path, 'the settings must be one JSON object');
    this.root = root;
    this.unit = /\n([ \t]+)["/]/.exec(this.text)?.[1] ?? '  ';
    this.eol = this.text.includes('\r\n') ? '\r\n' : '\n';
  }

  /** The node at a path of keys and indices, if there is one. */
  at(path: readonly (string | number)[]): Node | undefined {
    return findNodeAtLocation(this.root, [...path]);
  }

  /** The node's string value, or null when it is not a string. */
  static string(node: Node | undefined): string | null {
    return node?.type === 'string' && typeof node.value === 'string' ? node.value : null;
  }

  /** The value of an object's property, by key. */
  static property(object: Node, key: string): Node | undefined {
    return object.children?.find((property) => property.children?.[0]?.value === key)?.children?.[1];
  }

  replace(node: Node, value: unknown): void {
    this.edits.push({ offset: node.offset, length: node.length, content: JSON.stringify(value) });
  }

  /** New properties after the object's last one (or into an empty object), in the order given. */
  addProperties(object: Node, entries: readonly (readonly [string, unknown])[]): void {
    this.pending(object).push(
      ...entries.map(
        ([key, value]) =>
          (indent: string | null) =>
            `${JSON.stringify(key)}: ${this.render(value, indent)}`,
      ),
    );
  }

  /** New elements after the array's last one (or into an empty array). */
  addElements(array: Node, values: readonly unknown[]): void {
    this.pending(array).push(...values.map((value) => (indent: string | null) => this.render(value, indent)));
  }

  /** The text with every edit applied, or null when there is none. */
  result(): string | null {
    const edits = [...this.edits];
    for (const [container, items] of this.additions) if (items.length > 0) edits.push(this.append(container, items));
    if (edits.length === 0) return null;
    const sorted = edits.sort((a, b) => a.offset - b.offset);
    const parts: string[] = [];
    let at = 0;
    for (const edit of sorted) {
      parts.push(this.text.slice(at, edit.offset), edit.content);
      at = edit.offset + edit.length;
    }
    parts.push(this.text.slice(at));
    return parts.join('');
  }

  private pending(container: Node): Item[] {
    let items = this.additions.get(container);
    if (items === undefined) {
      items = [];
      this.additions.set(container, items);
    }
    return items;
  }

  /**
   * Items rendered for a container, as one insertion: after its last child on lines of their own
   * when the children are one per line (same indentation), on the same line when the container is
   * written inline.
   */
  private append(container: Node, items: readonly Item[]): Edit {
    const last = container.children?.at(-1);
    if (last === undefined) {
      const outer = this.indentAt(container.offset);
      const inner = `${outer}${this.unit}`;
      const body = items.map((item) => `${this.eol}${inner}${item(inner)}`).join(',');
      const closesAtOnce = this.text[container.offset + 1] === (container.type === 'object' ? '}' : ']');
      return { offset: container.offset + 1, length: 0, content: `${body}${closesAtOnce ? `${this.eol}${outer}` : ''}` };
    }
    let start = last.offset;
    while (start > 0 && ' \t'.includes(this.text[start - 1] ?? '')) start -= 1;
    const ownLine = start === 0 || this.text[start - 1] === '\n';
    const indent = ownLine ? this.indentAt(last.offset) : null;
    const separator = indent === null ? ' ' : `${this.eol}${indent}`;
    return { offset: last.offset + last.length, length: 0, content: items.map((item) => `,${separator}${item(indent)}`).join('') };
  }

  /** Pretty-printed at the given indentation; compact when the surroundings are inline. */
  private render(value: unknown, indent: string | null): string {
    if (indent === null) return JSON.stringify(value);
    return JSON.stringify(value, null, this.unit).replaceAll('\n', `${this.eol}${indent}`);
  }

  /** The leading whitespace of the line the offset is on. */
  private indentAt(offset: number): string {
    const lineStart = this.text.lastIndexOf('\n', offset - 1) + 1;
    return /^[ \t]*/.exec(this.text.slice(lineStart, Math.min(offset, lineStart + 256)))?.[0] ?? '';
  }
}
