/** Hook payloads are a few KiB; anything past this is not one. */
const STDIN_LIMIT = 1 << 20;

/**
 * All of stdin, or what arrived before `timeoutMs`: a hook must answer even when its caller never
 * closes the pipe. A terminal gives nothing (a person ran the hook by hand).
 */
export function readStdin(timeoutMs: number): Promise<string> {
  const stdin = process.stdin;
  if (stdin.isTTY) return Promise.resolve('');
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = () => {
      clearTimeout(timer);
      stdin.removeAllListeners('data');
      stdin.destroy();
      resolve(Buffer.concat(chunks).toString('utf8'));
    };
    const timer = setTimeout(finish, timeoutMs);
    stdin.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > STDIN_LIMIT) finish();
      else chunks.push(chunk);
    });
    stdin.once('end', finish);
    stdin.once('error', finish);
  });
}
