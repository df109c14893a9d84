import type { WireCodec } from '../core/types.js';
import { unbuilt } from './unbuilt.js';

export const geminiWire: WireCodec = unbuilt('the Gemini wire codec', { protocol: 'gemini' });
