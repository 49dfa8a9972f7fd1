/**
 * Fake secrets of every built-in detector, built from pieces so no scanner mistakes this file for a leak. Shared by
 * the detector tests and the end-to-end redaction tests.
 */
const x = (n: number, chars = 'aB3dE6gH9k'): string =>
  Array.from({ length: n }, (_, i) => chars[i % chars.length]).join('');
const b64url = (value: object): string =>
  btoa(JSON.stringify(value)).replace(/=+$/u, '').replace(/\+/gu, '-').replace(/\//gu, '_');

/** One planted secret: the text that holds it and the part that must never be stored in clear. */
export interface PlantedSecret {
  detector: string;
  /** Text as a user would write it. */
  text: string;
  /** The secret itself (what must disappear). */
  secret: string;
}

const jwt = `${b64url({ alg: 'HS256', typ: 'JWT' })}.${b64url({ sub: '1234567890', name: 'Jo' })}.${x(43, 'Sf1KxwRJ')}`;
const pem = [
  '-----BEGIN RSA PRIVATE KEY-----',
  x(64, 'MIIEowIBAAKCAQEA'),
  x(40, 'q9Zp'),
  '-----END RSA PRIVATE KEY-----',
].join('\n');

/** One example per built-in detector id (the detector tests check that every detector has one). */
export const DETECTOR_EXAMPLES: readonly PlantedSecret[] = [
  { detector: 'private-key', text: `here is my key\n${pem}\nthanks`, secret: pem },
  { detector: 'jwt', text: `token ${jwt} expired`, secret: jwt },
  { detector: 'aws-access-key-id', text: `id AKIA${'IOSFODNN7EXAMPLE'} in use`, secret: `AKIA${'IOSFODNN7EXAMPLE'}` },
  {
    detector: 'aws-secret-access-key',
    text: `aws_secret_access_key = ${'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'}`,
    secret: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  },
  { detector: 'github-token', text: `git clone with ghp_${x(36)}`, secret: `ghp_${x(36)}` },
  { detector: 'gitlab-token', text: `GITLAB glpat-${x(20)} ok`, secret: `glpat-${x(20)}` },
  {
    detector: 'slack-token',
    text: `bot xoxb-${'1234567890-0987654321-'}${x(24)}`,
    secret: `xoxb-1234567890-0987654321-${x(24)}`,
  },
  {
    detector: 'slack-webhook',
    text: `post to https://hooks.slack.com/services/T${x(8)}/B${x(8)}/${x(24)} now`,
    secret: `https://hooks.slack.com/services/T${x(8)}/B${x(8)}/${x(24)}`,
  },
  { detector: 'stripe-key', text: `stripe sk_live_${x(24)}`, secret: `sk_live_${x(24)}` },
  { detector: 'openai-key', text: `use sk-proj-${x(40)} please`, secret: `sk-proj-${x(40)}` },
  { detector: 'google-api-key', text: `maps AIza${x(35)} key`, secret: `AIza${x(35)}` },
  { detector: 'google-oauth-token', text: `oauth ya29.${x(40)}`, secret: `ya29.${x(40)}` },
  { detector: 'npm-token', text: `//registry/:_authToken npm_${x(36)}`, secret: `npm_${x(36)}` },
  { detector: 'pypi-token', text: `twine pypi-AgEIcHlwaS5vcmc${x(60)}`, secret: `pypi-AgEIcHlwaS5vcmc${x(60)}` },
  { detector: 'huggingface-token', text: `HF hf_${x(34, 'abcdEFGHij')} here`, secret: `hf_${x(34, 'abcdEFGHij')}` },
  { detector: 'sendgrid-key', text: `mail SG.${x(22)}.${x(43)} ok`, secret: `SG.${x(22)}.${x(43)}` },
  {
    detector: 'twilio-key',
    text: `twilio SK${x(32, '0123456789abcdef')} ok`,
    secret: `SK${x(32, '0123456789abcdef')}`,
  },
  {
    detector: 'shopify-token',
    text: `shop shpat_${x(32, '0123456789abcdef')} ok`,
    secret: `shpat_${x(32, '0123456789abcdef')}`,
  },
  {
    detector: 'digitalocean-token',
    text: `do dop_v1_${x(64, '0123456789abcdef')} ok`,
    secret: `dop_v1_${x(64, '0123456789abcdef')}`,
  },
  {
    detector: 'databricks-token',
    text: `db dapi${x(32, '0123456789abcdef')} ok`,
    secret: `dapi${x(32, '0123456789abcdef')}`,
  },
  { detector: 'linear-key', text: `linear lin_api_${x(40)} ok`, secret: `lin_api_${x(40)}` },
  {
    detector: 'url-credentials',
    text: 'connect to postgres://admin:Hunter2pass@db.internal:5432/app please',
    secret: 'Hunter2pass',
  },
  {
    detector: 'basic-auth',
    text: `Authorization: Basic ${btoa('alice:wonderland-42')}`,
    secret: btoa('alice:wonderland-42'),
  },
  { detector: 'bearer-token', text: `Authorization: Bearer ${x(12)}.${x(20)}`, secret: `${x(12)}.${x(20)}` },
  { detector: 'password', text: 'login with password: c0rrect-h0rse', secret: 'c0rrect-h0rse' },
  { detector: 'secret-assignment', text: 'curl -d client_secret=Zk29aa77Qp1 https://x', secret: 'Zk29aa77Qp1' },
];

/** Text in which no built-in detector may find anything. */
export const CLEAN_TEXTS: readonly string[] = [
  'The bearer of bad news arrived; basic arithmetic says 2+2=4.',
  'max_tokens: 512, input_tokens=1234, token_count: 77',
  'password reset instructions were sent to your email',
  'ask-the-expert and task-runner are not keys; skip this',
  'see https://example.com/path?q=1 and mailto:someone@example.com',
  'The secret of good cooking is patience.',
  'JSON: {"role": "user", "content": "hello"}',
];
