import { describe, expect, it } from 'vitest';
import { BUILTIN_DETECTORS } from './secret-detectors';
import { createRedactor, REDACTED } from './redactor';
import { CLEAN_TEXTS, DETECTOR_EXAMPLES } from './secret-fixtures';

describe('built-in secret detectors', () => {
  it('every built-in detector has an example (and every example names a detector)', () => {
    const ids = BUILTIN_DETECTORS.map((d) => d.id).sort();
    expect([...new Set(DETECTOR_EXAMPLES.map((e) => e.detector))].sort()).toEqual(ids);
  });

  for (const example of DETECTOR_EXAMPLES) {
    it(`${example.detector}: masks ${JSON.stringify(example.secret.slice(0, 14))}…`, () => {
      const only = createRedactor({ detectors: BUILTIN_DETECTORS.filter((d) => d.id === example.detector) });
      const masked = only.text(example.text);
      expect(masked).not.toContain(example.secret);
      expect(masked).toContain(REDACTED);
      expect(only.counts().byDetector[example.detector]).toBe(1);
      // The whole engine masks it too, and keeps the text around it.
      const all = createRedactor().text(example.text);
      expect(all).not.toContain(example.secret);
      expect(all).toBe(example.text.replace(example.secret, REDACTED));
    });
  }

  it('is idempotent: masked text is left as it is and counted once', () => {
    const redactor = createRedactor();
    for (const example of DETECTOR_EXAMPLES) {
      const once = redactor.text(`${example.text} password: pw-${example.detector}`);
      const before = redactor.counts().total;
      expect(redactor.text(once)).toBe(once);
      expect(redactor.counts().total).toBe(before);
    }
  });

  it('leaves ordinary text alone', () => {
    const redactor = createRedactor();
    for (const text of CLEAN_TEXTS) expect(redactor.text(text)).toBe(text);
    expect(redactor.counts().total).toBe(0);
  });

  it('keeps the key name, Bearer and user: prefixes and masks only the value', () => {
    const r = createRedactor();
    expect(r.text('ANTHROPIC_API_KEY="abc123def456ghi789"')).toBe(`ANTHROPIC_API_KEY="${REDACTED}"`);
    expect(r.text('{"password": "correct horse battery staple"}')).toBe(`{"password": "${REDACTED}"}`);
    expect(r.text('{\\"password\\":\\"hunter22\\"}')).toBe(`{\\"password\\":\\"${REDACTED}\\"}`);
    expect(r.text('mysql://root:toor-1@localhost/db')).toBe(`mysql://root:${REDACTED}@localhost/db`);
    expect(r.text('Authorization: Bearer abc.def-ghi_123')).toBe(`Authorization: Bearer ${REDACTED}`);
    expect(r.text('?api_key=s3cr3tvalue&x=1')).toBe(`?api_key=${REDACTED}&x=1`);
  });
});
