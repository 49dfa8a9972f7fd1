/**
 * Fake secrets of 15 kinds, two of each (30 in all), for end-to-end redaction tests: each with the text a user would
 * write around it and the needles that must never be found in clear in a store file, an export or an upload. Values
 * are built from pieces and an index, so every planted secret is distinct and no secret scanner flags this file.
 */
export interface PlantedSecret {
  kind: string;
  /** The text holding the secret (maybe with zero-width characters inside the secret). */
  text: string;
  /** Strings that must not appear anywhere once redacted (the secret, or its parts when it was split). */
  needles: string[];
}

const ZWSP = '\u200b';

/** `n` characters of `alphabet`, pseudo-random from `seed` (an LCG): distinct seeds give unrelated strings. */
function chars(n: number, seed: number, alphabet = 'aB3dE6gH9kLmN2pQr5StU8vWxYz'): string {
  let state = (seed * 2_654_435_761 + 12_345) >>> 0;
  let out = '';
  for (let i = 0; i < n; i += 1) {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    out += alphabet[(state >>> 16) % alphabet.length];
  }
  return out;
}

const b64url = (value: object): string =>
  btoa(JSON.stringify(value)).replace(/=+$/u, '').replace(/\+/gu, '-').replace(/\//gu, '_');

function one(kind: string, text: string, secret: string): PlantedSecret {
  return { kind, text, needles: [secret] };
}

/** The 15 kinds; `i` makes the values of the copies differ. */
const KINDS: Array<(i: number) => PlantedSecret> = [
  (i) => {
    const id = `AKIA${chars(16, i * 100, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567')}`;
    return one('aws-access-key-id', `my AWS id is ${id}`, id);
  },
  (i) => {
    const key = chars(40, i * 100 + 2, 'abcdefghijKLMNOPQRST0123456789/+');
    return one('aws-secret-access-key', `aws_secret_access_key=${key}`, key);
  },
  (i) => {
    const jwt = `${b64url({ alg: 'HS256', typ: 'JWT' })}.${b64url({ sub: `user-${i}`, n: 9_000 + i })}.${chars(43, i * 100 + 1)}`;
    return one('jwt', `session token: ${jwt}`, jwt);
  },
  (i) => {
    const basic = btoa(`svc-user${i}:Pw-${chars(12, i * 100 + 3)}`);
    return one('basic-auth', `curl -H "Authorization: Basic ${basic}" https://api.example.com`, basic);
  },
  (i) => {
    const token = `ghp_${chars(36, i * 100 + 4)}`;
    return one('github-token', `git remote set-url origin https://${token}@github.com/acme/app`, token);
  },
  (i) => {
    const token = `xoxb-${1000 + i}-${2000 + i}-${chars(24, i * 100 + 5)}`;
    return one('slack-token', `SLACK_BOT=${token}`, token);
  },
  (i) => {
    const key = `sk_live_${chars(24, i * 100 + 6)}`;
    return one('stripe-key', `charge with ${key} please`, key);
  },
  (i) => {
    const password = `Tr0ub4dor-${chars(8, i * 100 + 7)}`;
    return one('password', `db password: ${password}`, password);
  },
  (i) => {
    const secret = `cs-${chars(20, i * 100 + 8)}`;
    return one('client-secret', `POST /token client_id=app&client_secret=${secret}`, secret);
  },
  (i) => {
    const key = `ant-${chars(30, i * 100 + 9)}`;
    return one('env-api-key', `export ANTHROPIC_API_KEY="${key}"`, key);
  },
  (i) => {
    const body = chars(64, i * 100 + 10, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/');
    return one(
      'private-key',
      `-----BEGIN RSA PRIVATE KEY-----\n${body}\n${chars(48, i * 100 + 11)}\n-----END RSA PRIVATE KEY-----`,
      body,
    );
  },
  (i) => {
    const password = `pg-${chars(14, i * 100 + 12)}`;
    return one('url-credentials', `DATABASE_URL=postgres://app:${password}@db.internal:5432/prod`, password);
  },
  (i) => {
    const key = `sk-proj-${chars(48, i * 100 + 13)}`;
    return one('openai-key', `OPENAI key ${key}`, key);
  },
  (i) => {
    const key = `AIza${chars(35, i * 100 + 14)}`;
    return one('google-api-key', `maps?key=${key}`, key);
  },
  (i) => {
    // A key split by zero-width spaces: each part alone is short enough to look harmless.
    const key = `sk-proj-${chars(40, i * 100 + 15)}`;
    const parts = [key.slice(0, 14), key.slice(14, 30), key.slice(30)];
    return { kind: 'zero-width-split-key', text: `the key ${parts.join(ZWSP)} ok`, needles: [key, ...parts] };
  },
];

/** 30 planted secrets: the 15 kinds, twice, with different values; another `seed` gives another 30. */
export function plantedSecrets(seed = 0): PlantedSecret[] {
  return [2 * seed, 2 * seed + 1].flatMap((i) => KINDS.map((kind) => kind(i)));
}

/** A key split across two adjacent chat messages: the two texts and the needles (the key and both halves). */
export function splitAcrossMessages(seed: number): { first: string; second: string; needles: string[] } {
  const key = `sk-proj-${chars(44, 10_000 + seed)}`;
  const head = key.slice(0, 22);
  const tail = key.slice(22);
  return { first: `part one: ${head}`, second: `${tail} (part two)`, needles: [key, head, tail] };
}
