import type { ClientCodec } from '../core/client-codec.js';
import { unbuilt } from './unbuilt.js';

export const geminiClient: ClientCodec = unbuilt('the Gemini client codec', { protocol: 'gemini', endpoints: [], pathPrefix: undefined });
