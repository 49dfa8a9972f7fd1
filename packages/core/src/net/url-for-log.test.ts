import { describe, expect, it } from 'vitest';
import { urlForLog } from './url-for-log';

describe('urlForLog', () => {
  it('drops token, api_key and key (any case, dashes, percent-encoded names) and keeps the rest', () => {
    expect(urlForLog('/?token=abc123')).toBe('/');
    expect(urlForLog('/v1/agl/rollouts?limit=5&token=abc&API_KEY=k&x=1')).toBe('/v1/agl/rollouts?limit=5&x=1');
    expect(urlForLog('/a?key=1&Api-Key=2&%74oken=3&keep=4#frag')).toBe('/a?keep=4');
    expect(urlForLog('/plain/path')).toBe('/plain/path');
    expect(urlForLog('/a?keyboard=1&monkey=2')).toBe('/a?keyboard=1&monkey=2');
    expect(urlForLog('https://user:pw@host/x?access_token=z&q=1')).toBe('https://host/x?q=1');
  });
});
