import { Type, type Static } from '@sinclair/typebox';

/** The most verdicts the cache keeps; past it the least recently used go (and are scanned again when met). */
export const SECRET_VERDICTS_MAX = 20_000;

/** What a scan of one file found, as much as the withheld record says: the first finding and how many. */
export const SecretVerdictSchema = Type.Union([
  Type.Null(),
  Type.Object(
    {
      rule: Type.String({ maxLength: 200 }),
      id: Type.String({ maxLength: 200 }),
      line: Type.Integer({ minimum: 0 }),
      count: Type.Integer({ minimum: 1 }),
    },
    { additionalProperties: false },
  ),
]);
export type SecretVerdict = Static<typeof SecretVerdictSchema>;

/**
 * `<state dir>/cache/secret-verdicts.json`: the secret scan's verdicts by key (a sha256 over the
 * scanner's fingerprint, the path and the file's bytes: daemon/evacuation/scan-verdicts.ts), least
 * recently used first; null is a clean file. The daemon's own file, still read as untrusted: one that
 * does not validate is ignored whole.
 */
export const SecretVerdictsSchema = Type.Object(
  {
    version: Type.Literal(1),
    entries: Type.Array(Type.Tuple([Type.String({ pattern: '^[0-9a-f]{64}$' }), SecretVerdictSchema]), { maxItems: SECRET_VERDICTS_MAX }),
  },
  { additionalProperties: false },
);
export type SecretVerdicts = Static<typeof SecretVerdictsSchema>;
