/**
 * Credentials never reach a file, a log line or an answer. URLs lose their userinfo for http(s)
 * and their password elsewhere; known secret values are replaced wherever they appear.
 */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)([^/@\s'"]+)@/gi;

export function redactCredentials(text: string): string {
  return text.replace(URL_USERINFO, (_match, scheme: string, userinfo: string) => {
    if (/^https?:\/\/$/i.test(scheme)) return scheme;
    const user = userinfo.split(':')[0] ?? '';
    return `${scheme}${user}@`;
  });
}

/** Strips credentials from a remote URL for the manifest (scp-like `git@host:path` keeps its user). */
export function stripUrlCredentials(url: string): string {
  return redactCredentials(url);
}

export function redactValues(text: string, secrets: readonly string[]): string {
  let result = text;
  for (const secret of secrets) {
    if (secret.length >= 8) result = result.split(secret).join('[redacted]');
  }
  return redactCredentials(result);
}
