import { randomBytes } from 'node:crypto';

/**
 * Secrets in the shapes secretlint's recommended rules know, made fresh at run time: no key is
 * written literally in this repository, so a scan of the project itself finds none here.
 */
const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const pick = (alphabet: string, length: number): string => [...randomBytes(length)].map((byte) => alphabet[byte % alphabet.length]).join('');

export interface PlantedSecrets {
  /** `.env`: an AWS access key pair. */
  readonly awsSecret: string;
  readonly env: string;
  /** `id_ed25519`: an OpenSSH private key block. */
  readonly keyBody: string;
  readonly privateKey: string;
  /** A GitHub personal access token (`ghp_` + 36). */
  readonly githubToken: string;
  /** A kubeconfig with a bearer token and an embedded client key. */
  readonly kubeToken: string;
  readonly kubeKey: string;
  readonly kubeconfig: string;
  /** A `.netrc` entry's password. */
  readonly netrcPassword: string;
  readonly netrc: string;
}

export function plantedSecrets(): PlantedSecrets {
  // The preset's AWS pattern ends in \b: a key ending in / or + slips past it, so the planted one does not.
  const awsSecret = `${pick(`${ALNUM}/+`, 39)}${pick(ALNUM, 1)}`;
  // The preset checks the body's magic bytes, so the body is an OpenSSH key's: magic, then noise.
  const keyBody = Buffer.concat([Buffer.from('openssh-key-v1\0'), randomBytes(240)]).toString('base64');
  const githubToken = `${'gh'}p_${pick(ALNUM, 36)}`;
  const armour = (word: string) => `-----${word} OPENSSH PRIVATE ${'KEY'}-----`;
  const kubeToken = `${pick(ALNUM, 20)}.${pick(ALNUM, 40)}.${pick(ALNUM, 30)}`;
  const kubeKey = Buffer.from(`-----BEGIN RSA PRIVATE ${'KEY'}-----\n${randomBytes(96).toString('base64')}\n`).toString('base64');
  const netrcPassword = pick(ALNUM, 24);
  return {
    kubeToken,
    kubeKey,
    kubeconfig: [
      'apiVersion: v1',
      'kind: Config',
      'users:',
      '- name: admin',
      '  user:',
      `    token: ${kubeToken}`,
      '- name: robot',
      '  user:',
      `    client-key-data: ${kubeKey}`,
      '',
    ].join('\n'),
    netrcPassword,
    netrc: `machine git.example.invalid\n  login bob\n  password ${netrcPassword}\n`,
    awsSecret,
    env: `AWS_ACCESS_KEY_ID=${'AK'}IA${pick(BASE32, 16)}\nAWS_SECRET_ACCESS_KEY=${awsSecret}\n`,
    keyBody,
    privateKey: `${armour('BEGIN')}\n${keyBody.match(/.{1,70}/g)?.join('\n') ?? keyBody}\n${armour('END')}\n`,
    githubToken,
  };
}

/** `text` as UTF-32 with its BOM, as an editor saves it. */
export function utf32WithBom(text: string, layout: 'le' | 'be'): Buffer {
  const points = [0xfeff, ...[...text].map((char) => char.codePointAt(0) ?? 0)];
  const bytes = Buffer.alloc(points.length * 4);
  points.forEach((point, i) => (layout === 'le' ? bytes.writeUInt32LE(point, i * 4) : bytes.writeUInt32BE(point, i * 4)));
  return bytes;
}
