import { describe, expect, it } from 'vitest';
import { hostName, isLocalNetworkHost, isLoopbackHost } from '../../../src/util/loopback.js';

describe('host names', () => {
  it('loopback: localhost, 127/8, ::1 (also v4-mapped), nothing else', () => {
    for (const h of ['localhost', '127.0.0.1', '127.9.9.9', '::1', '[::1]', '::ffff:127.0.0.1']) expect(isLoopbackHost(h), h).toBe(true);
    for (const h of ['localhost.evil.example', '0.0.0.0', '[::2]', '10.0.0.1', 'api.openai.com']) expect(isLoopbackHost(h), h).toBe(false);
  });

  it('local network: loopback, private and link-local ranges, .local and single-label names; cloud hosts are not', () => {
    for (const h of ['127.0.0.1', '10.1.2.3', '192.168.1.20', '172.16.0.1', '172.31.255.1', '169.254.3.4', '[fd00::1]', 'fe80::1', 'gpu-box', 'studio.local']) {
      expect(isLocalNetworkHost(h), h).toBe(true);
    }
    for (const h of ['api.openai.com', 'openrouter.ai', '172.32.0.1', '8.8.8.8', '[2001:db8::1]', 'llm.example.com'])
      expect(isLocalNetworkHost(h), h).toBe(false);
  });

  it('hostName drops the port and keeps brackets', () => {
    expect(hostName('LocalHost:4141')).toBe('localhost');
    expect(hostName('[::1]:4141')).toBe('[::1]');
    expect(hostName('example.com')).toBe('example.com');
  });
});
