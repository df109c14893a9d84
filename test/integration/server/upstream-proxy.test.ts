import { networkInterfaces } from 'node:os';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfigText } from '../../../src/config/load.js';
import { completion } from '../../helpers/fake-upstream.js';
import { useHarness } from '../../helpers/harness.js';
import { chat, configYaml } from '../../helpers/proxy.js';
import { connectProxy, httpsJsonServer, saveProxyEnv, selfSignedCert } from '../../helpers/tls-upstream.js';

const h = useHarness();

// "cloud.example.test" is never resolved: through the proxy, only the proxy is dialled, and
// this proxy ends every tunnel at the loopback HTTPS fake.
const CLOUD_HOST = 'cloud.example.test';
const LAN_IP = Object.values(networkInterfaces())
  .flat()
  .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
const tls = selfSignedCert([CLOUD_HOST], ['127.0.0.1', ...(LAN_IP ? [LAN_IP] : [])]);
let cloud: Awaited<ReturnType<typeof httpsJsonServer>>;
let proxy: Awaited<ReturnType<typeof connectProxy>>;
const proxyEnv = saveProxyEnv();

beforeAll(async () => {
  cloud = await httpsJsonServer(tls, completion('from the cloud'));
  proxy = await connectProxy(() => cloud.port);
});
afterAll(async () => {
  await proxy.close();
  await cloud.close();
  tls.remove();
});
afterEach(() => {
  proxyEnv.restore();
  proxy.connects.length = 0;
});

function setProxy(noProxy?: string): void {
  for (const k of ['https_proxy', 'http_proxy', 'no_proxy']) delete process.env[k];
  process.env.HTTPS_PROXY = proxy.url;
  process.env.HTTP_PROXY = proxy.url;
  if (noProxy === undefined) delete process.env.NO_PROXY;
  else process.env.NO_PROXY = noProxy;
}

describe('upstreams through HTTPS_PROXY', () => {
  it('a cloud tier goes through the proxy (CONNECT), trusting its ca_file; the loopback tier goes direct', async () => {
    setProxy();
    const local = await h.fake();
    local.always((ctx) => ctx.json(500, { error: { message: 'local is down' } }));
    const p = await h.proxy({
      tiers: [
        { name: 'local', url: local.url, retry: { attempts: 1 } },
        { name: 'cloud', url: `https://${CLOUD_HOST}/v1`, api_key: 'k', provider: { ca_file: tls.certFile }, retry: { attempts: 1 } },
      ],
    });
    const res = await chat(p, {});
    expect(res.status, await res.clone().text()).toBe(200);
    expect(res.headers.get('x-llm-route-tier')).toBe('cloud');
    expect(((await res.json()) as { choices: Array<{ message: { content: string } }> }).choices[0].message.content).toBe('from the cloud');
    expect(local.requests).toHaveLength(1); // reached directly, not through the proxy
    expect(proxy.connects).toEqual([`${CLOUD_HOST}:443`]);
    expect(cloud.requests).toEqual(['POST /v1/chat/completions']);

    // Keep-alive through the tunnel: a second request, no second CONNECT.
    expect((await chat(p, {})).status).toBe(200);
    expect(proxy.connects).toHaveLength(1);
  });

  it('without ca_file the self-signed certificate is refused (502, the proxy was used)', async () => {
    setProxy();
    const p = await h.proxy({ tiers: [{ name: 'cloud', url: `https://${CLOUD_HOST}/v1`, api_key: 'k', retry: { attempts: 1 } }] });
    const res = await chat(p, {});
    expect(res.status).toBe(502);
    expect(proxy.connects).toEqual([`${CLOUD_HOST}:443`]);
  });

  it.skipIf(LAN_IP === undefined)('NO_PROXY naming the host: direct, no CONNECT', async () => {
    // This machine's own non-loopback address: remote as far as llm-route can tell, no DNS, no wire.
    const lan = await httpsJsonServer(tls, completion('direct'), LAN_IP);
    try {
      setProxy(`localhost,${LAN_IP}`);
      const p = await h.proxy({
        tiers: [{ name: 'cloud', url: `https://${LAN_IP}:${lan.port}/v1`, api_key: 'k', provider: { ca_file: tls.certFile }, retry: { attempts: 1 } }],
      });
      const res = await chat(p, {});
      expect(res.status, await res.clone().text()).toBe(200);
      expect(lan.requests).toHaveLength(1);
      expect(proxy.connects).toEqual([]);
    } finally {
      await lan.close();
    }
  });

  it('ca_file must be a readable PEM file: validate says where', () => {
    const yaml = configYaml({ tiers: [{ name: 'cloud', url: 'https://api.example.test/v1', provider: { ca_file: '/nonexistent/ca.pem' } }] });
    expect(() => loadConfigText(yaml, '/t/llm-route.yaml', {})).toThrow(/cannot read ca_file \/nonexistent\/ca\.pem: ENOENT/);
  });
});
