// Single files of packages, imported one by one (src/util/undici.ts, src/telemetry/prom.ts,
// typed there from the package's own types).
declare module 'undici/lib/*' {
  const exported: unknown;
  export default exported;
}
declare module 'prom-client/lib/*' {
  const exported: unknown;
  export default exported;
}
