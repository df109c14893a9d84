import { z } from '#zod';

// Traces over OpenTelemetry (README "Traces"): off unless this section (or the standard OTEL_* variables) says where to.

/** An HTTP header name (RFC 9110's token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export const OtlpSchema = z.strictObject({
  /** The collector's OTLP/HTTP base URL: spans are POSTed to `{endpoint}/v1/traces`. */
  endpoint: z.url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL, e.g. http://127.0.0.1:4318' }),
  /** Sent with every export (an API key: write it as ${VAR}); never logged. */
  headers: z
    .record(z.string(), z.string())
    .superRefine((headers, ctx) => {
      // Said of the map, not of a value: a value under `headers` is never quoted (it may be a key).
      for (const [name, value] of Object.entries(headers)) {
        if (!HEADER_NAME.test(name)) ctx.addIssue({ code: 'custom', message: `expected HTTP header names, and "${name}" is not one` });
        else if (/[\r\n]/.test(value)) ctx.addIssue({ code: 'custom', message: `the value of header "${name}" holds a line break` });
      }
    })
    .optional(),
  /** OTLP's encoding: protobuf (the default) or JSON. */
  protocol: z.enum(['http/protobuf', 'http/json']).optional(),
});

export const TelemetrySchema = z.strictObject({
  otlp: OtlpSchema.optional(),
});

export type TelemetryConfig = z.infer<typeof TelemetrySchema>;
export type OtlpConfig = z.infer<typeof OtlpSchema>;
