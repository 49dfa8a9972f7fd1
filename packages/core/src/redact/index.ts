export { BUILTIN_DETECTORS, type SecretDetector } from './secret-detectors';
export { normalizeForScan, type ScanText } from './normalize-for-scan';
export {
  REDACT_PATTERNS_ENV,
  compileRedactPatterns,
  redactPatternsFromEnv,
  type RedactPattern,
} from './redact-patterns';
export {
  REDACTED,
  Redactor,
  createRedactor,
  describeRedactions,
  type RedactionCounts,
  type RedactorOptions,
} from './redactor';
