import { describe, expect, it } from 'vitest';
import { allowedOrigin, BackendEndpoint } from './backend-endpoint';

const parse = (text: string): BackendEndpoint => {
  const endpoint = BackendEndpoint.parse(text);
  if (typeof endpoint === 'string') throw new Error(endpoint);
  return endpoint;
};

describe('BackendEndpoint', () => {
  it('refuses what is not an http(s) base URL', () => {
    expect(BackendEndpoint.parse('file:///etc/passwd')).toContain('only http and https');
    expect(BackendEndpoint.parse('http://h/internal/admin?secret=1#')).toContain('fragment');
    expect(BackendEndpoint.parse('http://user:pw@h/v1')).toContain('credentials');
    expect(BackendEndpoint.parse('not a url')).toBe('is not a URL');
  });

  it('appends route segments to the base path and keeps its query', () => {
    const endpoint = parse('http://h:8000/api/v1/?api-version=2');
    expect(endpoint.href).toBe('http://h:8000/api/v1?api-version=2');
    expect(endpoint.url('chat/completions').href).toBe('http://h:8000/api/v1/chat/completions?api-version=2');
    expect(endpoint.url(`models/${encodeURIComponent('..\\admin')}`).pathname).toBe('/api/v1/models/..%5Cadmin');
    expect(() => endpoint.url('../../admin/keys')).toThrow(/would leave the backend's base URL/);
  });

  it('knows the gateway itself under another loopback name', () => {
    const self = parse('http://127.0.0.1:4748');
    expect(parse('http://localhost:4748/v1').isSelf(self)).toBe(true);
    expect(parse('http://localhost:4749/v1').isSelf(self)).toBe(false);
  });

  it('takes origins only for --allow-backend', () => {
    expect(allowedOrigin('http://10.0.0.5:8000/')).toBe('http://10.0.0.5:8000');
    expect(() => allowedOrigin('http://10.0.0.5:8000/v1')).toThrow(/origin such as/);
  });
});
