/**
 * Helpers other AGL packages share but users should not build on: `@agl/core/internal` has no compatibility promise
 * and may change in any release.
 * @packageDocumentation
 * @internal
 */
export { closingQuote, valueEnd } from '../schema/json-depth';
