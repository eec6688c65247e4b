/**
 * Credentials never reach a file, a log line, an answer or the remote. A remote is turned into its
 * display form by parsing it the way git reads it — a URL with the WHATWG URL parser, the scp-like
 * form by git's documented syntax — never by a pattern over the text, which a password holding a
 * quote, a space, a slash or a query token walks through.
 */

/** git's `is_url`: a scheme, then `://` (git-scm.com/docs/git-clone#_git_urls). */
const URL_SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//;
/** `<transport>::<address>` hands the address to a remote helper (gitremote-helpers(7)). */
const HELPER = /^([A-Za-z][A-Za-z0-9+.-]*)::/;

function displayUrl(url: string, scheme: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // Nothing of an address the parser cannot read is shown: its userinfo cannot be told apart.
    return `${scheme}://[address not shown: not a valid URL]`;
  }
  // An `@` the parser left in the path (a raw `/` or `?` in a password ends the authority early) still
  // marks userinfo to whoever wrote it: everything through the last one is left out.
  const at = url.lastIndexOf('@');
  if (scheme.toLowerCase() !== 'file' && parsed.username === '' && parsed.password === '' && at > scheme.length + 3) {
    return displayUrl(`${scheme}://${url.slice(at + 1)}`, scheme);
  }
  parsed.username = '';
  parsed.password = '';
  parsed.search = '';
  parsed.hash = '';
  return parsed.href;
}

/**
 * The scp-like form `[user@]host:path` (git's rule: a colon before any slash, outside `[...]`).
 * Everything up to the last `@` before the path's first slash is userinfo — `user:pass@host:path`
 * included, which git would not read as a password but which holds one all the same.
 */
function displayScpLike(remote: string, colon: number): string {
  const slash = remote.indexOf('/', colon);
  const at = remote.lastIndexOf('@', slash === -1 ? remote.length : slash);
  // `[user@host:port]:path` keeps its brackets around what is left of the host.
  const address = remote.startsWith('[') && at !== -1 && at < remote.indexOf(']') ? `[${remote.slice(at + 1)}` : remote.slice(at + 1);
  const hostEnd = at < colon ? colon - at - 1 : address.indexOf(':');
  let path = hostEnd === -1 ? address : address.slice(hostEnd);
  for (const mark of ['?', '#']) {
    const cut = path.indexOf(mark);
    if (cut !== -1) path = path.slice(0, cut);
  }
  return hostEnd === -1 ? path : `${address.slice(0, hostEnd)}${path}`;
}

/** Where the scp-like form's host ends, or null when the remote is a local path. */
function scpColon(remote: string): number | null {
  const bracket = remote.startsWith('[') ? remote.indexOf(']') : -1;
  const colon = remote.indexOf(':', bracket === -1 ? 0 : bracket);
  if (colon <= 0) return null;
  const slash = remote.indexOf('/');
  return slash !== -1 && slash < colon ? null : colon;
}

/**
 * A remote that is a path on this machine: no `transport::`, no `scheme://`, not `host:path`. The first
 * two start with a name and a colon before any slash, so the scp-like rule already tells them apart.
 */
export function isLocalRemote(remote: string): boolean {
  return scpColon(remote) === null;
}

/**
 * The one display form of a remote — an https/ssh/file URL, the scp-like form, a local path, or
 * what `url.<base>.insteadOf` made of one: no userinfo, no query, no fragment.
 */
export function displayRemote(remote: string): string {
  const helper = HELPER.exec(remote);
  if (helper !== null) return `${helper[1]}::${displayRemote(remote.slice(helper[0].length))}`;
  const scheme = URL_SCHEME.exec(remote);
  // Stryker disable next-line StringLiteral: URL_SCHEME's one group always matches; `??` only narrows the type
  if (scheme !== null) return displayUrl(remote, scheme[1] ?? '');
  const colon = scpColon(remote);
  return colon === null ? remote : displayScpLike(remote, colon);
}

/**
 * URL-looking tokens in free text (git's stderr, an exception message), each passed through
 * displayRemote. A token runs to the next whitespace; one that follows a quote or a bracket ends at
 * the last matching closer inside it, so a quote inside a password stays inside the token.
 */
const URL_TOKEN = /[A-Za-z][A-Za-z0-9+.-]*:\/\/\S*/g;
const CLOSERS: Readonly<Record<string, string>> = { "'": "'", '"': '"', '`': '`', '<': '>', '(': ')', '[': ']', '{': '}' };

export function redactCredentials(text: string): string {
  return text.replace(URL_TOKEN, (token: string, offset: number) => {
    // Stryker disable next-line StringLiteral: before the text's start there is no closer, under any key that is not one
    const closer = CLOSERS[text[offset - 1] ?? ''];
    const end = closer === undefined ? -1 : token.lastIndexOf(closer);
    return end === -1 ? displayRemote(token) : `${displayRemote(token.slice(0, end))}${token.slice(end)}`;
  });
}

/** Known secret values (an environment's tokens) are replaced wherever they appear, then URLs are redacted. */
export function redactValues(text: string, secrets: readonly string[]): string {
  let result = text;
  for (const secret of secrets) {
    if (secret.length >= 8) result = result.split(secret).join('[redacted]');
  }
  return redactCredentials(result);
}
