import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { ConfigProblem } from './errors.js';
import type { Reporter } from './positions.js';
import { isRecord } from './raw-data.js';

/** A provider's `ca_file:` as an absolute path: relative paths are from the tier file's folder. */
export function caFilePath(caFile: string, tierFile: string): string {
  return resolve(dirname(tierFile), caFile);
}

/** Each `ca_file:` must be a readable PEM file with at least one certificate. */
export function caFileProblems(data: unknown, tierFile: string, report: Reporter): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  if (!isRecord(data) || !isRecord(data.providers)) return problems;
  for (const [name, provider] of Object.entries(data.providers)) {
    if (!isRecord(provider) || typeof provider.ca_file !== 'string' || provider.ca_file === '') continue;
    const path = caFilePath(provider.ca_file, tierFile);
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      problems.push(report.at('value', ['providers', name, 'ca_file'], `cannot read ca_file ${path}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`));
      continue;
    }
    if (!text.includes('-----BEGIN CERTIFICATE-----'))
      problems.push(report.at('value', ['providers', name, 'ca_file'], `ca_file ${path} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`));
  }
  return problems;
}
