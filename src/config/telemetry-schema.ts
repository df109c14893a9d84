import { z } from '#zod';

// Traces over OpenTelemetry (README "Traces"): off unless this section (or the standard OTEL_* variables) says where to.

/** An HTTP header name (RFC 9110's token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export const OtlpSchema = z.strictObject({
  /** The collector's OTLP/HTTP base URL: spans are POSTed to `{endpoint}/v1/traces`. */
  endpoint: z.url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL, e.g. http://127.0.0.1:4318' }),
  /** Sent with every export (an API key: write it as ${VAR}); never logged. */
  headers: z
    .record(
      z.string().regex(HEADER_NAME, 'expected an HTTP header name'),
      z.string().refine((value) => !/[\r\n]/.test(value), 'a header value cannot hold a line break'),
    )
    .optional(),
  /** OTLP's encoding: protobuf (the default) or JSON. */
  protocol: z.enum(['http/protobuf', 'http/json']).optional(),
});

export const TelemetrySchema = z.strictObject({
  otlp: OtlpSchema.optional(),
});

export type TelemetryConfig = z.infer<typeof TelemetrySchema>;
export type OtlpConfig = z.infer<typeof OtlpSchema>;
