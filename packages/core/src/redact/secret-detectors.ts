/**
 * One kind of secret the redaction engine finds. `pattern` is matched (globally) against text that was normalised
 * first (zero-width characters removed, confusable letters folded to ASCII). When the pattern has a named group
 * `secret`, only that group is masked and the rest of the match (a key name, `Bearer `, `user:`) is kept; otherwise
 * the whole match is masked.
 */
export interface SecretDetector {
  /** Stable id, used in redaction counts (`aws-access-key-id`, `jwt`, `user-pattern-1`, ...). */
  id: string;
  /** What it finds, for docs and summaries. */
  description: string;
  /** A regular expression; flags `g` and `d` are added when missing. */
  pattern: RegExp;
  /** Extra check of a candidate (the `secret` group, else the whole match); false keeps it in clear. */
  validate?: (candidate: string) => boolean;
}

/**
 * Key names whose value is a secret in `key=value`, `key: value` and `"key": "value"` forms. Matched from the keyword
 * on (`ANTHROPIC_API_KEY` matches at `API_KEY`; the rest of the name is kept anyway), not from the start of every word.
 */
const SECRET_KEY_NAMES =
  '(?:api[_-]?key|apikey|api[_-]?secret|client[_-]?secret|secret[_-]?key|access[_-]?key|' +
  'private[_-]?key|auth[_-]?token|access[_-]?token|refresh[_-]?token|session[_-]?token|secret|token|x-api-key)';

/** Between a key and its value: an optional closing quote (maybe escaped), `:` or `=`, an optional opening quote. */
const ASSIGN = `\\\\?["']?\\s*[:=]\\s*\\\\?["']?`;

/** A value (not one masked already): up to the closing quote when quoted (spaces allowed), else up to a delimiter. */
const value = (min: number): string =>
  `(?!\\[REDACTED\\])(?:(?<=["'])[^"'\\\\\\r\\n]{${min},512}|[^\\s"'\\\\&,;}\\]<>]{${min},512})`;

function hasDigitOrSymbol(candidate: string): boolean {
  return /[0-9._~+/=-]/.test(candidate);
}

/** `Basic <base64>` is a credential only when it decodes to `user:password`. */
function isBasicCredential(candidate: string): boolean {
  try {
    return /^[^:\s]*:.+$/su.test(atob(candidate));
  } catch {
    return false;
  }
}

/**
 * The built-in detectors: the formats issue 55 names (AWS, JWT, Basic auth, GitHub, Slack, Stripe, passwords, client
 * secrets, `*_API_KEY=` assignments, PEM private keys, URL credentials, OpenAI/Anthropic keys, Bearer tokens,
 * `api_key=`, Google API keys) and the common ones of secret scanners (gitleaks, secretlint): npm, PyPI, GitLab,
 * Hugging Face, SendGrid, Twilio, Shopify, DigitalOcean, Databricks, Linear, Slack webhooks, Google OAuth tokens.
 */
export const BUILTIN_DETECTORS: readonly SecretDetector[] = [
  {
    id: 'private-key',
    description: 'PEM private key block (RSA, EC, DSA, OPENSSH, PGP, PKCS#8), whole or cut off',
    pattern:
      /-----BEGIN[ A-Z0-9_-]{0,40}PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]{0,20000}?-----END[ A-Z0-9_-]{0,40}PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s\\]{0,20000})/,
  },
  {
    id: 'jwt',
    description: 'JSON Web Token (eyJ….eyJ….signature)',
    pattern: /\beyJ[A-Za-z0-9_-]{6,}\.eyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{6,}/,
  },
  {
    id: 'aws-access-key-id',
    description: 'AWS access key id (AKIA…, ASIA…)',
    pattern: /\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b/,
  },
  {
    id: 'aws-secret-access-key',
    description: 'AWS secret access key after aws_secret_access_key / SecretAccessKey',
    pattern: new RegExp(
      `(?<pre>(?:aws[_-]?secret[_-]?(?:access[_-]?)?key|secretaccesskey)${ASSIGN})(?<secret>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])`,
      'i',
    ),
  },
  {
    id: 'github-token',
    description: 'GitHub token (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_)',
    pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{30,255}|github_pat_[A-Za-z0-9_]{22,255})/,
  },
  {
    id: 'gitlab-token',
    description: 'GitLab personal access token (glpat-…)',
    pattern: /\bglpat-[A-Za-z0-9_-]{20,}/,
  },
  {
    id: 'slack-token',
    description: 'Slack token (xoxb-, xoxp-, xoxa-, xoxr-, xoxs-, xoxe-)',
    pattern: /\bxox[abeprs]-[A-Za-z0-9-]{10,}/,
  },
  {
    id: 'slack-webhook',
    description: 'Slack incoming webhook URL',
    pattern: /https:\/\/hooks\.slack\.com\/(?:services|workflows)\/[A-Za-z0-9/_-]{20,}/,
  },
  {
    id: 'stripe-key',
    description: 'Stripe secret or restricted key (sk_live_, rk_live_, sk_test_, rk_test_)',
    pattern: /\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}/,
  },
  {
    id: 'openai-key',
    description: 'OpenAI or Anthropic API key (sk-…, sk-proj-…, sk-ant-…)',
    pattern: /\bsk-(?:proj-|ant-|svcacct-|admin-)?[A-Za-z0-9_-]{8,}/,
  },
  {
    id: 'google-api-key',
    description: 'Google API key (AIza…)',
    pattern: /\bAIza[0-9A-Za-z_-]{35}/,
  },
  {
    id: 'google-oauth-token',
    description: 'Google OAuth access token (ya29.…)',
    pattern: /\bya29\.[0-9A-Za-z_-]{20,}/,
  },
  {
    id: 'npm-token',
    description: 'npm access token (npm_…)',
    pattern: /\bnpm_[A-Za-z0-9]{36}\b/,
  },
  {
    id: 'pypi-token',
    description: 'PyPI upload token (pypi-AgEIcHlwaS5vcmc…)',
    pattern: /\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}/,
  },
  {
    id: 'huggingface-token',
    description: 'Hugging Face access token (hf_…)',
    pattern: /\bhf_[A-Za-z]{34,40}\b/,
  },
  {
    id: 'sendgrid-key',
    description: 'SendGrid API key (SG.….…)',
    pattern: /\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b/,
  },
  {
    id: 'twilio-key',
    description: 'Twilio API key SID (SK + 32 hex)',
    pattern: /\bSK[0-9a-fA-F]{32}\b/,
  },
  {
    id: 'shopify-token',
    description: 'Shopify access token (shpat_, shpss_, shpca_, shppa_)',
    pattern: /\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}\b/,
  },
  {
    id: 'digitalocean-token',
    description: 'DigitalOcean token (dop_v1_, doo_v1_, dor_v1_)',
    pattern: /\bdo[opr]_v1_[a-f0-9]{64}\b/,
  },
  {
    id: 'databricks-token',
    description: 'Databricks token (dapi + 32 hex)',
    pattern: /\bdapi[a-f0-9]{32}(?:-\d)?\b/,
  },
  {
    id: 'linear-key',
    description: 'Linear API key (lin_api_…)',
    pattern: /\blin_api_[A-Za-z0-9]{40}\b/,
  },
  {
    id: 'url-credentials',
    description: 'password in a URL (postgres://user:pass@host, any scheme://user:pass@)',
    // Anchored on `://` (the scheme before it is kept anyway): scanning for a scheme at every word costs 30 times more.
    pattern: /(?<pre>:\/\/[^\s:/@'"]{1,128}:)(?<secret>[^\s@/'"]{1,256})(?=@)/,
  },
  {
    id: 'basic-auth',
    description: 'HTTP Basic credentials (Basic <base64 of user:password>)',
    pattern: /(?<pre>\bBasic\s+)(?<secret>[A-Za-z0-9+/]{6,}={0,2})/i,
    validate: isBasicCredential,
  },
  {
    id: 'bearer-token',
    description: 'Bearer token (Authorization: Bearer …)',
    pattern: /(?<pre>\bBearer\s+)(?<secret>[A-Za-z0-9._~+/-]{8,}=*)/i,
    validate: hasDigitOrSymbol,
  },
  {
    id: 'password',
    description: 'password value (password: …, passwd=…, "pwd": "…", passphrase=…)',
    pattern: new RegExp(`(?<pre>\\b(?:password|passwd|passphrase|pwd)${ASSIGN})(?<secret>${value(3)})`, 'i'),
  },
  {
    id: 'secret-assignment',
    description: 'value of a secret-named key (api_key=, client_secret=, ANTHROPIC_API_KEY="…", access_token: …)',
    pattern: new RegExp(`(?<pre>${SECRET_KEY_NAMES}${ASSIGN})(?<secret>${value(4)})`, 'i'),
    validate: (candidate) => !/^(?:null|none|true|false|undefined|\[REDACTED\]|[0-9.]+)$/i.test(candidate),
  },
];

/** A cheap test: text that matches none of these cannot hold a built-in secret (checked before the full scan). */
export const BUILTIN_HINT =
  /-----BEGIN|eyJ|A(?:KIA|SIA|BIA|CCA|3T)|gh[pousr]_|github_pat_|glpat-|xox|hooks\.slack|[rs]k_(?:live|test)_|sk-|AIza|ya29\.|npm_|pypi-|hf_|SG\.|SK[0-9a-f]|shp|do[opr]_v1|dapi|lin_api|:\/\/|basic|bearer|pass|pwd|key|secret|token/i;
