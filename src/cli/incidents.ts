import { findIncident, listIncidents } from '../usage/incidents/incident-rows.js';
import { incidentJson } from '../usage/incidents/incident-json.js';
import { incidentNumbers } from '../usage/incidents/postmortem.js';
import { renderPostmortem } from '../usage/incidents/render-postmortem.js';
import { openUsageLogForReading } from '../usage/open-log.js';
import { formatInt, textTable } from '../usage/text-table.js';

export interface IncidentsOptions {
  config?: string;
  json?: boolean;
}

/** `llm-route incidents`: every incident recorded, newest first, with its numbers from the usage log. */
export async function runIncidents(opts: IncidentsOptions): Promise<number> {
  const log = openUsageLogForReading(opts.config);
  if (!log.ok) {
    process.stderr.write(`llm-route incidents: ${log.message}\n`);
    return 2;
  }
  try {
    const now = Date.now();
    const incidents = listIncidents(log.db);
    const entries = incidents.map((incident) => incidentJson(incident, incidentNumbers(log.db, incident, now)));
    if (opts.json) {
      process.stdout.write(`${JSON.stringify({ incidents: entries })}\n`);
      return 0;
    }
    if (entries.length === 0) {
      process.stdout.write(`no incidents recorded in ${log.path}\n`);
      return 0;
    }
    const rows = entries.map((e, i) => {
      const closedBy = incidents[i].closedBy && incidents[i].closedBy !== 'restore' ? ` (${incidents[i].closedBy})` : '';
      const share = (e.route_requests as number) > 0 ? ` (${(((e.affected_requests as number) / (e.route_requests as number)) * 100).toFixed(1)}%)` : '';
      return [
        String(e.id),
        e.kind as string,
        `${e.route as string}/${e.tier as string}`,
        e.opened_at as string,
        e.closed_at === null ? 'open' : `${e.closed_at as string}${closedBy}`,
        `${formatInt(e.affected_requests as number)} of ${formatInt(e.route_requests as number)}${share}`,
      ];
    });
    process.stdout.write(`${textTable(['ID', 'KIND', 'TIER', 'OPENED', 'CLOSED', 'AFFECTED'], rows)}\n\nllm-route incidents show ID: the postmortem draft\n`);
    return 0;
  } finally {
    log.db.close();
  }
}

/** `llm-route incidents show ID`: the postmortem draft (root cause, impact, preventive actions). */
export async function runIncidentShow(id: string, opts: IncidentsOptions): Promise<number> {
  const number = Number(id);
  if (!Number.isInteger(number) || number < 1) {
    process.stderr.write(`llm-route incidents show: invalid incident id "${id}": expected a number from \`llm-route incidents\`\n`);
    return 2;
  }
  const log = openUsageLogForReading(opts.config);
  if (!log.ok) {
    process.stderr.write(`llm-route incidents show: ${log.message}\n`);
    return 2;
  }
  try {
    const incident = findIncident(log.db, number);
    if (!incident) {
      process.stderr.write(`llm-route incidents show: no incident #${number} in ${log.path}\n`);
      return 2;
    }
    const numbers = incidentNumbers(log.db, incident, Date.now());
    const postmortem = renderPostmortem(incident, numbers);
    process.stdout.write(opts.json ? `${JSON.stringify({ incident: incidentJson(incident, numbers), numbers, postmortem })}\n` : `${postmortem}\n`);
    return 0;
  } finally {
    log.db.close();
  }
}
