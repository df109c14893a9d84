import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Dispatcher } from 'undici';
import { loadConfigText } from '../../src/config/load.js';
import type { Config, Provider, Route, Tier } from '../../src/config/schema.js';
import type { TierGate } from '../../src/health/health-view.js';
import type { ClientCodec } from '../../src/protocols/core/client-codec.js';
import type { ClientProtocol } from '../../src/protocols/core/names.js';
import type { ClientRequest } from '../../src/protocols/core/types.js';
import { clientCodec } from '../../src/protocols/registry.js';
import { createUpstreamDispatcher } from '../../src/providers/upstream-dispatcher.js';
import { ProviderPools } from '../../src/providers/pools.js';
import { Exchange, type ProxyView } from '../../src/proxy/exchange.js';
import { RequestHolds } from '../../src/proxy/request-holds.js';
import { type Arrival, RoutingRequest, type RoutingView } from '../../src/proxy/routing.js';
import { StreamSlots } from '../../src/proxy/stream-slots.js';
import type { StreamSink } from '../../src/proxy/stream-sink.js';
import { EmbeddedState } from '../../src/state/embedded-state.js';
import { SessionAffinity } from '../../src/state/session-affinity.js';
import { SpaceWidths } from '../../src/state/space-widths.js';
import { TelemetryBus } from '../../src/telemetry/bus.js';
import type { TelemetryEvent } from '../../src/telemetry/events.js';
import { UsageLog } from '../../src/usage/usage-log.js';
import { ClientLifetime } from '../../src/util/client-lifetime.js';
import type { useHarness } from './harness.js';
import { type ConfigSpec, configYaml } from './proxy.js';
import { RecordingSink } from './proxy-parts.js';

/**
 * The routing loop's parts for its unit tests (test/unit/proxy/): the tier file loaded as serve
 * loads it, a request parsed by its client codec, the exchange's side of routing (an Arrival that
 * records its commits), a gate the test sets, the real limits and budgets (the local limiter and
 * the SQLite ledger in a temp dir), and the project's own pools on fake upstreams on port 0.
 */

/** A tier file (one provider per tier, `p_<tier>`), loaded. */
export function loadSpec(spec: ConfigSpec): Config {
  return loadConfigText(configYaml(spec), '/t/llm-route.yaml', {});
}

export function chatRoute(config: Config): Route {
  const route = config.routes.get('chat');
  if (!route) throw new Error('no route chat');
  return route;
}

/** A request as its client codec parses it (a Chat Completions body unless `protocol` says otherwise). */
export function parsedRequest(body: Record<string, unknown>, protocol: ClientProtocol = 'chat', headers: Record<string, string> = {}): ClientRequest {
  const parsed = clientCodec(protocol).parse({ model: 'chat', messages: [{ role: 'user', content: 'hi' }], ...body }, headers);
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.request;
}

/** Health as the test says: tiers down, cold, or whose half-open trial another request holds; the claims asked, in order. */
export class TestGate implements TierGate {
  readonly down = new Set<string>();
  readonly cold = new Set<string>();
  readonly trialTaken = new Set<string>();
  readonly claims: string[] = [];

  weight(tier: Tier): number {
    return tier.weight;
  }

  allows(tier: Tier): boolean {
    return !this.down.has(tier.name);
  }

  claim(tier: Tier): boolean {
    this.claims.push(tier.name);
    return !this.trialTaken.has(tier.name);
  }

  isCold(tier: Tier): boolean {
    return this.cold.has(tier.name);
  }
}

/** The exchange's side of routing: commits recorded, each answered with one RecordingSink; the project's own pool per provider. */
export class TestArrival implements Arrival {
  readonly id = 'req-test';
  readonly arrivedAt = performance.now();
  readonly client = new ClientLifetime();
  readonly sink = new RecordingSink();
  readonly commits: Array<{ tier: string; attempts: number }> = [];
  private readonly byProvider = new Map<Provider, Dispatcher>();
  readonly pools = { get: (provider: Provider): Dispatcher => this.poolOf(provider) };

  constructor(
    readonly codec: ClientCodec,
    private readonly defer: (fn: () => unknown) => void,
  ) {}

  commit(tier: Tier, attempts: number): StreamSink {
    this.commits.push({ tier: tier.name, attempts });
    return this.sink;
  }

  private poolOf(provider: Provider): Dispatcher {
    let pool = this.byProvider.get(provider);
    if (!pool) {
      const made = createUpstreamDispatcher(provider, 2_000);
      this.defer(() => made.destroy());
      this.byProvider.set(provider, (pool = made));
    }
    return pool;
  }
}

/** The real limits and budgets: the local limiter, and the budgets ledger on a SQLite file in a temp dir (closed and removed after the test). */
export function realState(config: Config, defer: (fn: () => unknown) => void): EmbeddedState {
  const dir = mkdtempSync(join(tmpdir(), 'llm-route-loop-'));
  const withDb: Config = { ...config, usage: { ...config.usage, enabled: true, path: join(dir, 'usage.db') } };
  const log = new UsageLog(new TelemetryBus(), withDb);
  defer(() => rmSync(dir, { recursive: true, force: true }));
  defer(() => log.close());
  return new EmbeddedState(log.budgets);
}

/** Every event published on `bus`, in order. */
export function recordEvents(bus: TelemetryBus): TelemetryEvent[] {
  const events: TelemetryEvent[] = [];
  bus.subscribe((event) => events.push(event));
  return events;
}

export interface Loop {
  req: RoutingRequest;
  arrival: TestArrival;
  app: RoutingView;
  gate: TestGate;
  events: TelemetryEvent[];
}

/**
 * One request ready for the routing loop on `config`'s route `chat`: `body` over a one-message
 * Chat request; with `state`, the route's limits and budgets are held through it.
 */
export function loopFor(
  h: ReturnType<typeof useHarness>,
  config: Config,
  body: Record<string, unknown> = {},
  opts: { state?: EmbeddedState; protocol?: ClientProtocol; headers?: Record<string, string> } = {},
): Loop {
  const protocol = opts.protocol ?? 'chat';
  const route = chatRoute(config);
  const request = parsedRequest(body, protocol, opts.headers);
  const arrival = new TestArrival(clientCodec(protocol), h.defer);
  const bus = new TelemetryBus();
  const events = recordEvents(bus);
  const holds = opts.state ? RequestHolds.for(route, config, opts.state, request) : null;
  const gate = new TestGate();
  const app: RoutingView = { gate, telemetry: bus, random: () => 0.5, affinity: new SessionAffinity(() => performance.now()), spaces: new SpaceWidths() };
  return { req: new RoutingRequest(arrival, route, request, bus, holds), arrival, app, gate, events };
}

/** What a client received from an exchange: its status, headers and body, once the response has ended. */
export interface Received {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * A real node:http response for an exchange: a server on port 0 whose one request (from fetch)
 * is handed to the test as an Exchange on `config`. `received`: what the client got once the
 * response ended (null when it hung up, `hangUp`); the test closes the exchange itself.
 */
export async function exchangeOn(
  h: ReturnType<typeof useHarness>,
  config: Config,
  opts: { protocol?: ClientProtocol; state?: EmbeddedState } = {},
): Promise<{ exchange: Exchange; events: TelemetryEvent[]; received: Promise<Received | null>; hangUp: () => void }> {
  const bus = new TelemetryBus();
  const events = recordEvents(bus);
  const pools = new ProviderPools(config);
  h.defer(() => pools.close());
  const app: ProxyView = {
    snapshot: () => ({ config, pools: pools.acquire() }),
    gate: new TestGate(),
    telemetry: bus,
    random: () => 0.5,
    affinity: new SessionAffinity(() => performance.now()),
    spaces: new SpaceWidths(),
    state: opts.state ?? realState(config, h.defer),
    inFlight: new Set(),
    streams: new StreamSlots(),
  };
  const server = createServer();
  h.defer(() => new Promise((done) => server.close(done)));
  h.defer(() => server.closeAllConnections());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const arrived = new Promise<ServerResponse>((resolve) => server.once('request', (_req: IncomingMessage, res: ServerResponse) => resolve(res)));
  const abort = new AbortController();
  const { port } = server.address() as AddressInfo;
  const received = fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: '{}', signal: abort.signal }).then(
    async (res) => ({ status: res.status, headers: Object.fromEntries(res.headers), body: await res.text() }),
    () => null,
  );
  const exchange = new Exchange(app, await arrived, clientCodec(opts.protocol ?? 'chat'), 'req-test');
  return { exchange, events, received, hangUp: () => abort.abort() };
}
