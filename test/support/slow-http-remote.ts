import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, basename } from 'node:path';

/**
 * A bare repository served over smart HTTP on 127.0.0.1 by git's own `git http-backend` (CGI), where
 * every upload-pack request (the ref listing and the fetch) waits `delayS` first: a remote that is slow
 * for real, whatever the receiver's git config says about upload-pack (the daemon pins its own).
 * Pushes are served too (`http.receivepack` is turned on in the bare repository). With `basicAuth`
 * (`user:password`), every request without those credentials is answered 401, as a hosted remote does.
 * With `beforeAnswer`, each answer git made is sent only once it resolves: the repository was read
 * already, so a test can move the remote while a client holds a listing of it as it was.
 */
export async function slowHttpRemote(
  bare: string,
  delayS: number,
  basicAuth?: string,
  beforeAnswer?: (answer: Buffer) => Promise<void>,
): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    if (basicAuth !== undefined && req.headers.authorization !== `Basic ${Buffer.from(basicAuth).toString('base64')}`) {
      req.resume();
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"' }).end('credentials required\n');
      return;
    }
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const slow = url.searchParams.get('service') === 'git-upload-pack' || url.pathname.endsWith('/git-upload-pack');
    setTimeout(
      () => {
        const cgi = spawn('git', ['-c', 'http.receivepack=true', 'http-backend'], {
          env: {
            PATH: process.env['PATH'] ?? '/usr/bin:/bin',
            GIT_PROJECT_ROOT: dirname(bare),
            GIT_HTTP_EXPORT_ALL: '1',
            PATH_INFO: url.pathname,
            QUERY_STRING: url.search.slice(1),
            REQUEST_METHOD: req.method ?? 'GET',
            CONTENT_TYPE: req.headers['content-type'] ?? '',
            REMOTE_ADDR: '127.0.0.1',
          },
          stdio: ['pipe', 'pipe', 'ignore'],
        });
        // http-backend may answer (a 404 for a path it does not serve, such as the LFS API) without
        // reading the body: the rest of it has nowhere to go, which is not the test's failure.
        cgi.stdin.on('error', () => undefined);
        req.pipe(cgi.stdin);
        const chunks: Buffer[] = [];
        cgi.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
        cgi.on('close', async () => {
          const out = Buffer.concat(chunks);
          await beforeAnswer?.(out);
          const split = out.indexOf('\r\n\r\n');
          const head = out.subarray(0, split).toString('latin1').split('\r\n');
          let status = 200;
          for (const line of head) {
            const [name = '', ...value] = line.split(':');
            if (name.toLowerCase() === 'status') status = Number.parseInt(value.join(':').trim(), 10);
            else res.setHeader(name, value.join(':').trim());
          }
          res.writeHead(status);
          res.end(out.subarray(split + 4));
        });
      },
      slow ? delayS * 1000 : 0,
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/${basename(bare)}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
