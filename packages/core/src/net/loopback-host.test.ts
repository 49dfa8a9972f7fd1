import { describe, expect, it } from 'vitest';
import { hostHeaderAllowed, hostHeaderName, isLoopbackHost } from './loopback-host';

describe('loopback host rule', () => {
  it('recognises loopback bind addresses', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost', 'LOCALHOST'])
      expect(isLoopbackHost(host)).toBe(true);
    for (const host of ['0.0.0.0', '::', '10.0.0.1', 'example.com', 'localhost.example.com', '127.0.0.1.nip.io'])
      expect(isLoopbackHost(host)).toBe(false);
  });

  it('reads the host name of a Host header', () => {
    expect(hostHeaderName('localhost:4747')).toBe('localhost');
    expect(hostHeaderName('[::1]:80')).toBe('[::1]');
    expect(hostHeaderName('[::1]')).toBe('[::1]');
    expect(hostHeaderName('Example.COM')).toBe('example.com');
    expect(hostHeaderName('a:b')).toBeNull();
    expect(hostHeaderName('[::1')).toBeNull();
    expect(hostHeaderName('')).toBeNull();
    expect(hostHeaderName(undefined)).toBeNull();
  });

  it('answers only loopback names on a loopback bind unless allowed', () => {
    for (const header of ['127.0.0.1', '127.0.0.1:4747', 'localhost:1', '[::1]:4747'])
      expect(hostHeaderAllowed('127.0.0.1', header)).toBe(true);
    for (const header of [
      'rebind.attacker.example',
      'rebind.attacker.example:4747',
      '',
      undefined,
      '127.0.0.1.attacker.example',
    ])
      expect(hostHeaderAllowed('127.0.0.1', header)).toBe(false);
    expect(hostHeaderAllowed('127.0.0.1', 'agl.internal:4747', ['agl.internal'])).toBe(true);
    expect(hostHeaderAllowed('127.0.0.1', 'AGL.internal', ['agl.internal:9999'])).toBe(true);
    expect(hostHeaderAllowed('0.0.0.0', 'anything.example')).toBe(true);
  });
});
