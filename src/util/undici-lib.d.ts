// undici's own files, imported one by one by undici.ts (typed there, from undici's index types).
declare module 'undici/lib/*' {
  const exported: unknown;
  export default exported;
}
